#pragma once
/** @file
 * Error tiers (see AGENTS.md):
 *  - TILECC_ASSERT: internal invariants, compiled out with NDEBUG.
 *  - TILECC_CHECK: every public precondition; always on; throws InputError, which derives from
 *    std::invalid_argument so that nanobind turns it into a Python ValueError.
 *  - OutOfMemory: memory the system would not give; a std::bad_alloc, so a Python MemoryError.
 */
#include <cassert>
#include <cstddef>
#include <new>
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

/** Memory the system would not give. The message is one sentence with how much, for what, and the
 * remedy; nanobind turns a std::bad_alloc into a Python MemoryError with it. */
class OutOfMemory : public std::bad_alloc {
 public:
  /** `purpose`: what the memory was for ("a tensor's blocks"). */
  OutOfMemory(std::size_t bytes, const char* purpose)
      : message_(detail::concat("could not get ", (bytes + (std::size_t{1} << 20) - 1) >> 20,
                                " MiB for ", purpose,
                                " from the system; free the tensors that are no longer needed "
                                "or make the calculation smaller.")) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

}  // namespace tilecc

#define TILECC_CHECK(cond, ...)                                                     \
  do {                                                                              \
    if (!(cond)) throw ::tilecc::InputError(::tilecc::detail::concat(__VA_ARGS__)); \
  } while (0)

#define TILECC_ASSERT(cond) assert(cond)
