// The doc snippet checks (doc_snippets.py check) compile with this file's command from
// compile_commands.json: the target docs_snippet_flags carries every include path and flag a
// snippet may need. Nothing here is used.
namespace tc_docs {
int flags_anchor = 0;
}  // namespace tc_docs
