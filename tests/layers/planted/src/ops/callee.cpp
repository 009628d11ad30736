// Fixture: ops calls down into core and across into lazy (neither reported).
int planted_core_helper(int x);
int planted_lazy_peer(int x);
int planted_ops_callee(int x) { return x > 0 ? planted_core_helper(x) : planted_lazy_peer(-x); }
