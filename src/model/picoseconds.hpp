#pragma once
// Simulated and virtual time: a strong type over integer picoseconds with checked arithmetic.
//
// Why not std::chrono::duration<std::int64_t, std::pico>: its arithmetic wraps (undefined
// behaviour on int64) where a huge trace or a slow link would pass 2^63 ps; here every sum,
// difference and product is checked and an overflow is a TimeRangeError naming what happened,
// never a negative time. Why not Boost.SafeNumerics: one __builtin_*_overflow per operation is
// all that is needed, and the error must be commgauge's own (exit 2 with the reason). The
// simulator's hot loops (BM_Replay*, BM_MessageCost) were measured before and after the type.

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <limits>

namespace commgauge::model {

class Picoseconds {
 public:
  using rep = std::int64_t;

  constexpr Picoseconds() noexcept = default;
  constexpr explicit Picoseconds(rep ps) noexcept : ps_(ps) {}

  /// The value in picoseconds.
  constexpr rep count() const noexcept { return ps_; }

  static constexpr Picoseconds zero() noexcept { return Picoseconds{}; }
  static constexpr Picoseconds max() noexcept {
    return Picoseconds{std::numeric_limits<rep>::max()};
  }
  static constexpr Picoseconds min() noexcept {
    return Picoseconds{std::numeric_limits<rep>::min()};
  }

  friend constexpr auto operator<=>(Picoseconds, Picoseconds) noexcept = default;

  friend constexpr Picoseconds operator+(Picoseconds a, Picoseconds b) {
    rep r;
    if (__builtin_add_overflow(a.ps_, b.ps_, &r)) [[unlikely]]
      overflow("+", a.ps_, b.ps_);
    return Picoseconds{r};
  }
  friend constexpr Picoseconds operator-(Picoseconds a, Picoseconds b) {
    rep r;
    if (__builtin_sub_overflow(a.ps_, b.ps_, &r)) [[unlikely]]
      overflow("-", a.ps_, b.ps_);
    return Picoseconds{r};
  }
  constexpr Picoseconds operator-() const { return Picoseconds{} - *this; }
  /// A time n times over (n messages, n rounds).
  friend constexpr Picoseconds operator*(Picoseconds a, rep n) {
    rep r;
    if (__builtin_mul_overflow(a.ps_, n, &r)) [[unlikely]]
      overflow("*", a.ps_, n);
    return Picoseconds{r};
  }
  friend constexpr Picoseconds operator*(rep n, Picoseconds a) { return a * n; }
  /// A share of a time, rounded toward zero as integers are.
  friend constexpr Picoseconds operator/(Picoseconds a, rep n) { return Picoseconds{a.ps_ / n}; }
  /// How many times b fits in a (toward zero).
  friend constexpr rep operator/(Picoseconds a, Picoseconds b) { return a.ps_ / b.ps_; }
  friend constexpr Picoseconds operator%(Picoseconds a, Picoseconds b) {
    return Picoseconds{a.ps_ % b.ps_};
  }

  constexpr Picoseconds& operator+=(Picoseconds b) { return *this = *this + b; }
  constexpr Picoseconds& operator-=(Picoseconds b) { return *this = *this - b; }
  constexpr Picoseconds& operator*=(rep n) { return *this = *this * n; }

 private:
  /// Throws TimeRangeError: "a time of A ps OP B passes the clock's range (2^63 ps)".
  [[noreturn]] static void overflow(const char* op, rep a, rep b);

  rep ps_ = 0;
};

inline namespace literals {
/// 1500_ps: a time written in picoseconds.
constexpr Picoseconds operator""_ps(unsigned long long ps) {
  return Picoseconds{static_cast<Picoseconds::rep>(ps)};
}
}  // namespace literals

/// "12345 ps", for test failure messages and logs.
std::ostream& operator<<(std::ostream& os, Picoseconds t);

}  // namespace commgauge::model
