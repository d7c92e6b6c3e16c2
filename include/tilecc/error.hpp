#pragma once
/** @file
 * Error tiers (see AGENTS.md):
 *  - TILECC_ASSERT: internal invariants, compiled out with NDEBUG.
 *  - TILECC_CHECK: every public precondition; always on; throws InputError, which derives from
 *    std::invalid_argument so that nanobind turns it into a Python ValueError.
 */
#include <cassert>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tilecc {

/** A mistake in what the user asked for (a space, tensor, label, option). The message is one
 * sentence that names the operand, the values and the remedy. */
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
/** Items written one after another with `sep` between them. */
template <class Range>
std::string join(const Range& items, const char* sep) {
  std::ostringstream os;
  const char* between = "";
  for (const auto& item : items) {
    os << between << item;
    between = sep;
  }
  return os.str();
}
}  // namespace detail

}  // namespace tilecc

#define TILECC_CHECK(cond, ...)                                                     \
  do {                                                                              \
    if (!(cond)) throw ::tilecc::InputError(::tilecc::detail::concat(__VA_ARGS__)); \
  } while (0)

#define TILECC_ASSERT(cond) assert(cond)
