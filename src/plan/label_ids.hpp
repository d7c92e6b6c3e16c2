#pragma once
// The inspector's view of a contraction's labels: small integer ids per operand, where each
// operand carries them, and the block layouts they imply (which axes a stored block is read by,
// whether it can be read in place as a matrix).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tilecc/plan.hpp"

namespace tilecc::detail {

// The plan's labels as small integers (C's labels first, then the summed ones), so that working
// out block layouts compares small arrays instead of strings. A list holds at most one operand's
// labels (max_rank of them).
class Ids {
 public:
  Ids() = default;
  /** A list of n ids to be given by set(). */
  static Ids unset(int n) {
    Ids ids;
    ids.size_ = n;
    return ids;
  }
  void push_back(int id) { ids_[static_cast<std::size_t>(size_++)] = static_cast<std::int8_t>(id); }
  /** Gives position j its id. */
  void set(int j, int id) { ids_[static_cast<std::size_t>(j)] = static_cast<std::int8_t>(id); }
  int size() const { return size_; }
  int operator[](int j) const { return ids_[static_cast<std::size_t>(j)]; }
  /** Position of `id`, or -1. */
  int find(int id) const {
    for (int j = 0; j < size_; ++j)
      if ((*this)[j] == id) return j;
    return -1;
  }
  /** The first n ids, and the ids from position n on. */
  Ids first(int n) const {
    Ids out;
    for (int j = 0; j < n; ++j) out.push_back((*this)[j]);
    return out;
  }
  Ids from(int n) const {
    Ids out;
    for (int j = n; j < size_; ++j) out.push_back((*this)[j]);
    return out;
  }
  bool operator==(const Ids& other) const {
    return size_ == other.size_ && std::equal(begin(), end(), other.begin());
  }
  friend Ids concat(const Ids& x, const Ids& y) {
    Ids out = x;
    for (int id : y) out.push_back(id);
    return out;
  }
  const std::int8_t* begin() const { return ids_.data(); }
  const std::int8_t* end() const { return ids_.data() + size_; }

 private:
  std::array<std::int8_t, max_rank> ids_{};
  int size_ = 0;
};

// Labels carried by the axes of the stored block that `axes` reads: stored axis axes[j] carries
// the operand's j-th label.
inline Ids stored_labels(const Ids& labels, const Axes& axes) {
  Ids s = Ids::unset(labels.size());
  for (int j = 0; j < labels.size(); ++j) s.set(axes[static_cast<std::size_t>(j)], labels[j]);
  return s;
}

// Axes that turn a block whose axes carry `from` into one whose axes carry `to`.
inline Axes axes_between(const Ids& from, const Ids& to) {
  Axes axes{};
  for (int j = 0; j < to.size(); ++j)
    axes[static_cast<std::size_t>(j)] = static_cast<std::int8_t>(from.find(to[j]));
  return axes;
}

struct InPlace {
  Ids summed_order;
  bool fixed_first;  // the stored block is [fixed..., summed...]
};

// Can a stored block whose axes carry `stored` be read in place as a matrix with the `fixed`
// labels (in this order) on one side and all summed labels on the other?
inline std::optional<InPlace> in_place(const Ids& stored, const Ids& fixed) {
  const int nf = fixed.size(), n = stored.size();
  if (stored.first(nf) == fixed) return InPlace{stored.from(nf), true};
  if (stored.from(n - nf) == fixed) return InPlace{stored.first(n - nf), false};
  return std::nullopt;
}

}  // namespace tilecc::detail

namespace tilecc {

// Each distinct label gets the next id in the order the labels first appear in C, A and B: on
// valid input C's labels are then 0..nc-1 by position and the summed ones follow in A's order.
struct ContractionPlan::LabelIds {
  static constexpr int most = 3 * max_rank;  // distinct labels of three operands
  static_assert(most <= 32, "a label id must fit the 32-bit sets below");
  detail::Ids c, a, b;
  // Bit id set: the operand carries label id. A carries it at position a_at[id], B at b_at[id],
  // else -1; on valid input C carries label id at position id.
  std::uint32_t c_set = 0, a_set = 0, b_set = 0;
  std::array<std::int8_t, most> a_at, b_at;
  int count = 0;      // distinct labels
  bool clean = true;  // no operand has an empty label or one label twice

  /** Each operand's labels, one per index (the caller has checked their number). Most labels
   *  are one letter, found by that letter; longer ones by comparison with those met before. */
  LabelIds(const Operand& oc, const Operand& oa, const Operand& ob) {
    a_at.fill(-1);
    b_at.fill(-1);
    std::array<std::int8_t, 256> by_letter;
    by_letter.fill(-1);
    std::array<const std::string*, most> longer{};  // by id, labels of other lengths
    auto id_of = [&](const std::string& l) -> int {
      if (l.size() == 1) {
        std::int8_t& id = by_letter[static_cast<unsigned char>(l[0])];
        if (id < 0) id = static_cast<std::int8_t>(count++);
        return id;
      }
      clean = clean && !l.empty();
      for (int id = 0; id < count; ++id)
        if (longer[static_cast<std::size_t>(id)] != nullptr &&
            *longer[static_cast<std::size_t>(id)] == l)
          return id;
      longer[static_cast<std::size_t>(count)] = &l;
      return count++;
    };
    auto add = [&](const Operand& op, detail::Ids& ids, std::uint32_t& set) {
      for (const std::string& l : op.labels) {
        const int id = id_of(l);
        clean = clean && (set >> id & 1u) == 0;
        set |= 1u << id;
        ids.push_back(id);
      }
    };
    add(oc, c, c_set);
    add(oa, a, a_set);
    add(ob, b, b_set);
    for (int p = 0; p < a.size(); ++p)
      a_at[static_cast<std::size_t>(a[p])] = static_cast<std::int8_t>(p);
    for (int p = 0; p < b.size(); ++p)
      b_at[static_cast<std::size_t>(b[p])] = static_cast<std::int8_t>(p);
  }
  /** Each output label in exactly one operand and every other label in both. */
  bool valid() const {
    const std::uint32_t summed = (a_set | b_set) & ~c_set;
    return clean && (c_set & ~(a_set ^ b_set)) == 0 && (summed & ~(a_set & b_set)) == 0;
  }
};

}  // namespace tilecc
