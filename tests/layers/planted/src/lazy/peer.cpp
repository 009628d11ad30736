// Fixture: lazy calls ops, its own layer (not reported), and core (not reported).
int planted_ops_callee(int x);
int planted_core_helper(int x);
int planted_lazy_peer(int x) { return planted_ops_callee(x) + planted_core_helper(x); }
