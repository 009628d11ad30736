#pragma once
// Dim names of TensorDicts (core/dim_names.cpp): how batch ops move them, and Python's rules for
// names when a TensorDict is set into another. Private to the runtime.
#include <functional>
#include <optional>

#include "core/tensordict_impl.h"
#include "tensordict/index.h"

namespace tensordict::detail {

/// How a batch op moves dim names: the names of the `nb` dims it acts on -> the names of the
/// dims that replace them. Every level applies it to its first `nb` names and keeps the rest.
using NamesOp = std::function<DimNames(const DimNames&)>;
/// `names`, or nullopt when no dim is named (Python stores no names then).
std::optional<DimNames> normalized_names(DimNames names);
/// A level's names after a batch op over its first `nb` dims (nullopt: no names, or no `op`).
std::optional<DimNames> moved_names(const std::optional<DimNames>& names, size_t nb,
                                    const NamesOp& op);
/// Python's names of `td[index]` (_get_names_idx): ints drop the dim's name, None inserts an
/// unnamed dim, slices keep it, the first index tensor repeats its dim's name once per dim of
/// the tensor, a lone boolean mask becomes one unnamed dim.
NamesOp index_names(const Index& index);
/// The names unchanged (ops that keep every dim: split, gather).
NamesOp same_names();
/// Names after erasing dim `d` / inserting an unnamed dim at `d`.
NamesOp erase_name(int64_t d);
NamesOp insert_name(int64_t d);
/// Python's _rename_subtds: nested TensorDicts of `impl` take `names` for their leading dims;
/// nullopt erases the names of the direct children.
void rename_nested(TensorDictImpl& impl, const std::optional<DimNames>& names);
/// Python's names check of a TensorDict `value` set into `parent`: a named parent gives the child
/// its names (on a structure copy when they differ, so the caller's child keeps its own; Error
/// when a named dim disagrees); an unnamed parent takes a named child's leading names.
void exchange_names(TensorDictImpl& parent, Value& value);

}  // namespace tensordict::detail
