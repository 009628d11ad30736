// Fixture for tc_lazy_forwards: branches on the lazy form outside the lazy code.
struct Impl {
  bool lazy;
};

int forwarded(const Impl* impl_, int x) {
  if (impl_->lazy) return x + 1;  // one statement: a forward
  if (impl_->lazy) {              // a statement and an exit: a forward ("{ ; ; }" in a comment)
    x += 2;
    return x;
  }
  return x;
}

int inline_logic(const Impl* impl_, int x) {
  if (impl_->lazy) {  // reported: the lazy semantics written here
    int y = x * 2;
    y += 1;
    return y;
  }
  return x;
}
