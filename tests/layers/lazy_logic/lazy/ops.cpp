// Fixture: the lazy code itself may branch and hold logic.
struct Impl {
  bool lazy;
};

int lazy_logic(const Impl* impl_, int x) {
  if (impl_->lazy) {
    int y = x * 2;
    y += 1;
    return y;
  }
  return x;
}
