// Fixture for the link-level layer check: core calls up into ops (reported) and uses its own
// layer (not reported).
int planted_ops_callee(int x);
int planted_core_helper(int x) { return x + 1; }
int planted_core_caller(int x) { return planted_ops_callee(planted_core_helper(x)); }
