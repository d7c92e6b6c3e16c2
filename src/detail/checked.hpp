#pragma once
/** @file Size arithmetic that refuses to overflow.
 *
 * Extents, tile counts, element counts and byte sizes are products of user-given numbers (orbital
 * counts, tile sizes, ranks). A product that does not fit its type would wrap silently: a tensor
 * of 2^61 elements would get a 64-byte buffer, 2^64 tile tuples an empty index. Every such product
 * and sum goes through these, which throw an InputError that names what was being sized. */
#include <cstdint>
#include <limits>

#include "tilecc/error.hpp"

namespace tilecc::detail {

/** a * b, or an InputError saying that `what` is too large to represent. */
template <class T>
T checked_product(T a, T b, const char* what) {
  T out{};
  TILECC_CHECK(!__builtin_mul_overflow(a, b, &out), what, " (", a, " x ", b,
               ") is too large to represent; use larger tiles or a smaller problem.");
  return out;
}

/** a + b, or an InputError saying that `what` is too large to represent. */
template <class T>
T checked_sum(T a, T b, const char* what) {
  T out{};
  TILECC_CHECK(!__builtin_add_overflow(a, b, &out), what, " (", a, " + ", b,
               ") is too large to represent; use larger tiles or a smaller problem.");
  return out;
}

/** `value` as a BLAS integer (32 bits in the BLAS tilecc loads), or an InputError. */
template <class Int, class T>
Int checked_narrow(T value, const char* what) {
  TILECC_CHECK(value >= 0 && value <= static_cast<T>(std::numeric_limits<Int>::max()), what, " ",
               value, " does not fit the BLAS's ", 8 * sizeof(Int),
               "-bit integers; use smaller tiles or a 64-bit-integer BLAS.");
  return static_cast<Int>(value);
}

}  // namespace tilecc::detail
