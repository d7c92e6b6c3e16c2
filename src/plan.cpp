#include "tilecc/plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "detail/labels.hpp"
#include "tilecc/error.hpp"
#include "tilecc/trace.hpp"

namespace tilecc {
namespace {

LabelList concat(const LabelList& x, const LabelList& y) {
  LabelList r = x;
  r.insert(r.end(), y.begin(), y.end());
  return r;
}

// Labels carried by the axes of the stored block that `axes` reads: stored axis axes[j] carries
// the operand's j-th label.
LabelList stored_labels(const LabelList& labels, const Axes& axes) {
  LabelList s(labels.size());
  for (std::size_t j = 0; j < labels.size(); ++j) s[static_cast<std::size_t>(axes[j])] = labels[j];
  return s;
}

// Axes that turn a block whose axes carry `from` into one whose axes carry `to`.
Axes axes_between(const LabelList& from, const LabelList& to) {
  Axes axes{};
  for (std::size_t j = 0; j < to.size(); ++j)
    axes[j] = static_cast<std::int8_t>(detail::find_label(from, to[j]));
  return axes;
}

struct InPlace {
  LabelList summed_order;
  bool fixed_first;  // the stored block is [fixed..., summed...]
};

// Can a stored block whose axes carry `stored` be read in place as a matrix with the `fixed`
// labels (in this order) on one side and all summed labels on the other?
std::optional<InPlace> in_place(const LabelList& stored, const LabelList& fixed) {
  const std::size_t nf = fixed.size(), n = stored.size();
  if (std::equal(fixed.begin(), fixed.end(), stored.begin()))
    return InPlace{LabelList(stored.begin() + static_cast<std::ptrdiff_t>(nf), stored.end()), true};
  if (std::equal(fixed.begin(), fixed.end(), stored.begin() + static_cast<std::ptrdiff_t>(n - nf)))
    return InPlace{LabelList(stored.begin(), stored.begin() + static_cast<std::ptrdiff_t>(n - nf)),
                   false};
  return std::nullopt;
}

// Permutations of the summed labels (as maps of summed-label indices) that a symmetry element of
// `op` realises while fixing its other labels, with that element's sign.
std::map<std::vector<int>, int> summed_symmetries(const Operand& op, const LabelList& summed) {
  std::map<std::vector<int>, int> found;
  for (const SymmetryElement& g : op.shape->group().elements()) {
    std::vector<int> rho(summed.size(), -1);
    bool fixes_others = true;
    for (std::size_t p = 0; p < op.labels.size(); ++p) {
      const int from = detail::find_label(summed, op.labels[p]);
      const auto gp = static_cast<std::size_t>(g.perm[p]);
      if (from < 0) {
        fixes_others = fixes_others && gp == p;
        continue;
      }
      rho[static_cast<std::size_t>(from)] = detail::find_label(summed, op.labels[gp]);
    }
    if (fixes_others && std::find(rho.begin(), rho.end(), -1) == rho.end())
      found.emplace(std::move(rho), g.sign);
  }
  return found;
}

}  // namespace

ContractionPlan::ContractionPlan(Operand c, Operand a, Operand b, PlanLayout layout,
                                 const CostModel& model)
    : c_(std::move(c)), a_(std::move(a)), b_(std::move(b)), layout_(layout) {
  const double t0 = clock_seconds();
  detail::check_labels(c_);
  detail::check_labels(a_);
  detail::check_labels(b_);
  for (std::size_t p = 0; p < c_.labels.size(); ++p) {
    const std::string& l = c_.labels[p];
    const int pa = detail::find_label(a_.labels, l), pb = detail::find_label(b_.labels, l);
    TILECC_CHECK(pa >= 0 || pb >= 0, "output label '", l, "' of ", detail::show(c_),
                 " appears in neither ", detail::show(a_), " nor ", detail::show(b_),
                 "; every output label must come from an operand.");
    TILECC_CHECK(pa < 0 || pb < 0, "label '", l, "' appears in ", detail::show(a_), ", ",
                 detail::show(b_), " and the output ", detail::show(c_),
                 "; batched (Hadamard) labels are not supported, so sum or keep each label once.");
    if (pa >= 0) detail::check_same_space(l, a_, pa, c_, static_cast<int>(p));
    if (pb >= 0) detail::check_same_space(l, b_, pb, c_, static_cast<int>(p));
  }
  for (const Operand* op : {&a_, &b_}) {
    const Operand& other = op == &a_ ? b_ : a_;
    for (std::size_t p = 0; p < op->labels.size(); ++p) {
      const std::string& l = op->labels[p];
      const int po = detail::find_label(other.labels, l);
      TILECC_CHECK(po >= 0 || detail::find_label(c_.labels, l) >= 0, "label '", l, "' of ",
                   detail::show(*op), " appears neither in ", detail::show(other),
                   " nor in the output ", detail::show(c_),
                   "; a summed label must appear in"
                   " both operands.");
      if (po >= 0 && op == &a_) detail::check_same_space(l, a_, static_cast<int>(p), b_, po);
    }
  }
  build();
  estimate(model);
  inspector_seconds_ = clock_seconds() - t0;
}

void ContractionPlan::build() {
  const BlockShape& sc = *c_.shape;
  const BlockShape& sa = *a_.shape;
  const BlockShape& sb = *b_.shape;
  LabelList rows, cols, summed;  // M (C order), N (C order), K (A order)
  for (const std::string& l : c_.labels)
    (detail::find_label(a_.labels, l) >= 0 ? rows : cols).push_back(l);
  for (const std::string& l : a_.labels)
    if (detail::find_label(c_.labels, l) < 0) summed.push_back(l);

  dense_flops_ = 2.0;
  for (std::size_t p = 0; p < c_.labels.size(); ++p)
    dense_flops_ *= static_cast<double>(sc.space(static_cast<int>(p)).size());
  for (const std::string& l : summed)
    dense_flops_ *= static_cast<double>(sa.space(detail::find_label(a_.labels, l)).size());

  if (c_.labels == concat(rows, cols)) {
    output_ = Output::direct;
  } else if (c_.labels == concat(cols, rows)) {
    output_ = Output::transposed;
  } else {
    output_ = Output::buffered;
  }
  const LabelList r_labels = concat(rows, cols);
  for (const std::string& l : r_labels) r_positions_.push_back(detail::find_label(c_.labels, l));
  output_axes_ = axes_between(r_labels, c_.labels);

  // H: summed-label permutations realised by both operands. Opposite signs mean A*B sums to 0.
  const auto ha = summed_symmetries(a_, summed), hb = summed_symmetries(b_, summed);
  std::vector<std::vector<int>> h;
  for (const auto& [rho, sign] : ha) {
    auto it = hb.find(rho);
    if (it == hb.end()) continue;
    if (sign * it->second < 0) {
      zero_by_symmetry_ = true;
      return;
    }
    h.push_back(rho);
  }
  summed_symmetry_order_ = static_cast<int>(h.size());

  // Where each operand index takes its tile from: an output position (>= 0) or summed label ~k.
  auto sources = [&](const Operand& op) {
    std::vector<int> src;
    for (const std::string& l : op.labels) {
      const int pc = detail::find_label(c_.labels, l);
      src.push_back(pc >= 0 ? pc : ~detail::find_label(summed, l));
    }
    return src;
  };
  const std::vector<int> src_a = sources(a_), src_b = sources(b_);
  std::vector<const IndexSpace*> summed_space;
  for (const std::string& l : summed)
    summed_space.push_back(&sa.space(detail::find_label(a_.labels, l)));
  const auto nk = summed.size();

  std::map<std::uint64_t, std::int32_t> recipe_of;
  auto recipe_for = [&](const Axes& axa, const Axes& axb) {
    std::uint64_t key = 0;
    for (int j = 0; j < sa.rank(); ++j)
      key = key * 8 + static_cast<std::uint64_t>(axa[static_cast<std::size_t>(j)]);
    for (int j = 0; j < sb.rank(); ++j)
      key = key * 8 + static_cast<std::uint64_t>(axb[static_cast<std::size_t>(j)]);
    if (auto it = recipe_of.find(key); it != recipe_of.end()) return it->second;
    const LabelList stored_a = stored_labels(a_.labels, axa),
                    stored_b = stored_labels(b_.labels, axb);
    Recipe r;
    const auto da = in_place(stored_a, rows), db = in_place(stored_b, cols);
    LabelList order;
    if (da) {
      order = da->summed_order;
      r.a.trans = !da->fixed_first;
    }
    if (db && (!da || db->summed_order == order)) {
      order = db->summed_order;
      r.b.trans = db->fixed_first;
    } else if (da) {
      r.b.permute = true;
    }
    if (!da) {
      if (!db) order = LabelList(summed);  // neither in place: K in A's label order
      r.a.permute = true;
      if (!db) r.b.permute = true;
    }
    r.a_rows = axes_between(stored_a, concat(rows, order));
    if (r.a.permute) r.a.axes = r.a_rows;
    if (r.b.permute) r.b.axes = axes_between(stored_b, concat(order, cols));
    recipes_.push_back(r);
    const auto id = static_cast<std::int32_t>(recipes_.size() - 1);
    recipe_of.emplace(key, id);
    return id;
  };

  // One unit per canonical output block with products; units are stacked into tasks below.
  struct Unit {
    Member member;
    extent_t n = 1;
    std::int64_t last = 0;
    double flops = 0.0;
  };
  std::vector<Unit> units;
  TileTuple ta{}, tb{};
  std::vector<tile_t> u(nk), image(nk);
  // A's irrep fixes the irrep of its last summed tile once every other tile is chosen, so only
  // the tiles of that irrep are tried there (with D2h, an eighth of them).
  std::array<std::vector<tile_t>, 8> last_by_irrep;
  if (nk > 0)
    for (tile_t t = 0; t < summed_space[nk - 1]->num_tiles(); ++t)
      last_by_irrep[static_cast<std::size_t>(summed_space[nk - 1]->tile(t).irrep)].push_back(t);
  const int last_summed = ~static_cast<int>(nk - 1);
  for (slot_t slot = 0; slot < sc.num_blocks(); ++slot) {
    const tile_t* tc = sc.block_tiles(slot);
    Unit task;
    task.member.c_slot = slot;
    task.member.first = num_products();
    task.member.m = 1;
    for (std::size_t p = 0; p < c_.labels.size(); ++p)
      (detail::find_label(rows, c_.labels[p]) >= 0 ? task.member.m : task.n) *=
          sc.space(static_cast<int>(p)).tile(tc[p]).extent;
    auto visit = [&] {
      for (std::size_t p = 0; p < src_a.size(); ++p)
        ta[p] = src_a[p] >= 0 ? tc[src_a[p]] : u[static_cast<std::size_t>(~src_a[p])];
      for (std::size_t p = 0; p < src_b.size(); ++p)
        tb[p] = src_b[p] >= 0 ? tc[src_b[p]] : u[static_cast<std::size_t>(~src_b[p])];
      // Spin and irreps reject most tuples, and cost less to test than the H-orbit.
      bool canonical = sa.allowed(ta.data()) && sb.allowed(tb.data());
      // Keep one tuple per H-orbit (the smallest), weighted by the orbit's size.
      int stabiliser = 0;
      for (std::size_t r = 0; canonical && r < h.size(); ++r) {
        for (std::size_t q = 0; q < nk; ++q) image[q] = u[static_cast<std::size_t>(h[r][q])];
        canonical = !std::lexicographical_compare(image.begin(), image.end(), u.begin(), u.end());
        stabiliser += image == u ? 1 : 0;
      }
      if (!canonical) return;
      const BlockRef ra = *sa.locate(ta.data());
      const BlockRef rb = *sb.locate(tb.data());
      Product pr;
      pr.a_slot = ra.slot;
      pr.b_slot = rb.slot;
      pr.recipe = recipe_for(ra.axes, rb.axes);
      pr.scale = ra.sign * rb.sign * static_cast<double>(h.size()) / stabiliser;
      pr.k = 1;
      for (std::size_t q = 0; q < nk; ++q) pr.k *= summed_space[q]->tile(u[q]).extent;
      products_.push_back(pr);
      const Recipe& rc = recipes_[static_cast<std::size_t>(pr.recipe)];
      permuted_operands_ += (rc.a.permute ? 1 : 0) + (rc.b.permute ? 1 : 0);
      task.flops += 2.0 * static_cast<double>(task.member.m) * static_cast<double>(task.n) *
                    static_cast<double>(pr.k);
    };
    if (nk == 0) {
      visit();
    } else {
      // Odometer over all summed tiles but the last, which takes only the tiles of its irrep.
      std::fill(u.begin(), u.end(), 0);
      for (;;) {
        int irrep = sa.irrep();
        for (std::size_t p = 0; p < src_a.size(); ++p)
          if (src_a[p] != last_summed)
            irrep ^=
                sa.space(static_cast<int>(p))
                    .tile(src_a[p] >= 0 ? tc[src_a[p]] : u[static_cast<std::size_t>(~src_a[p])])
                    .irrep;
        for (tile_t t : last_by_irrep[static_cast<std::size_t>(irrep)]) {
          u[nk - 1] = t;
          visit();
        }
        std::size_t q = nk - 1;
        while (q > 0 && ++u[q - 1] == summed_space[q - 1]->num_tiles()) u[--q] = 0;
        if (q == 0) break;
      }
    }
    task.last = num_products();
    if (task.last > task.member.first) {
      executed_flops_ += task.flops;
      units.push_back(task);
    }
  }
  if (layout_ == PlanLayout::tce) {
    // TCE's tasks: one per output block, in loop (slot) order, never stacked.
    std::vector<slot_t> task_slots;
    for (const Unit& un : units) {
      stack({un.member}, un.n, un.last - un.member.first, {un.flops});
      task_slots.push_back(un.member.c_slot);
    }
    build_tce_loop(task_slots);
    return;
  }
  // Units whose products read the same B blocks, laid out alike, in the same order can share
  // GEMMs: group them by that signature (in order of first appearance) and stack their rows.
  auto b_layout = [&](const Product& pr) {
    const OperandLayout& b = recipes_[static_cast<std::size_t>(pr.recipe)].b;
    std::int64_t key = (b.permute ? 2 : 0) + (b.trans ? 1 : 0);
    for (int j = 0; j < sb.rank(); ++j) key = key * 8 + b.axes[static_cast<std::size_t>(j)];
    return key;
  };
  std::map<std::vector<std::int64_t>, std::size_t> group_of;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const Unit& un = units[i];
    std::vector<std::int64_t> signature = {un.n, un.last - un.member.first};
    for (std::int64_t p = un.member.first; p < un.last; ++p) {
      const Product& pr = products_[static_cast<std::size_t>(p)];
      signature.insert(signature.end(), {pr.b_slot, b_layout(pr), pr.k});
    }
    auto [it, fresh] = group_of.emplace(std::move(signature), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  for (const std::vector<std::size_t>& group : groups) {
    std::vector<Member> members;
    std::vector<double> flops;
    for (std::size_t i : group) {
      members.push_back(units[i].member);
      flops.push_back(units[i].flops);
    }
    const Unit& first = units[group.front()];
    stack(members, first.n, first.last - first.member.first, flops);
  }
}

void ContractionPlan::build_tce_loop(const std::vector<slot_t>& task_slots) {
  // The loop nest runs over every tile tuple of C that is canonical under C's permutation group
  // (TCE puts that restriction in its loop bounds); spin, irrep and emptiness are tested only
  // inside, so those tuples are null tasks.
  const BlockShape& sc = *c_.shape;
  const int n = sc.rank();
  for (int k = 0; k < n; ++k)
    if (sc.space(k).num_tiles() == 0) return;
  std::size_t next_task = 0;
  TileTuple t{};
  for (;;) {
    if (sc.is_canonical(t.data())) {
      task_id_t task = -1;
      if (next_task < task_slots.size()) {
        const auto ref = sc.locate(t.data());
        if (ref && ref->slot == task_slots[next_task]) task = static_cast<task_id_t>(next_task++);
      }
      loop_.push_back(task);
    }
    int k = n;
    while (k > 0 && ++t[static_cast<std::size_t>(k - 1)] == sc.space(k - 1).num_tiles())
      t[static_cast<std::size_t>(--k)] = 0;
    if (k == 0) break;
  }
  TILECC_ASSERT(next_task == task_slots.size());
}

void ContractionPlan::stack(const std::vector<Member>& group, extent_t n, std::int64_t products,
                            const std::vector<double>& flops) {
  // Greedy chunks of about stack_rows rows; a block that is tall enough stays alone.
  std::size_t g = 0;
  while (g < group.size()) {
    Task task;
    task.first_member = static_cast<std::int64_t>(members_.size());
    task.products = products;
    task.n = n;
    do {
      Member m = group[g];
      m.row_offset = task.rows;
      task.rows += m.m;
      task.flops += flops[g];
      members_.push_back(m);
      ++g;
    } while (g < group.size() && task.rows < stack_rows);
    task.last_member = static_cast<std::int64_t>(members_.size());
    tasks_.push_back(task);
    // Scratch of this task: stacked A (or permuted A), B, and R when it is needed.
    const bool alone = task.last_member - task.first_member == 1;
    for (std::int64_t p = 0; p < products; ++p) {
      const Product& pr = products_[static_cast<std::size_t>(
          members_[static_cast<std::size_t>(task.first_member)].first + p)];
      const Recipe& rc = recipes_[static_cast<std::size_t>(pr.recipe)];
      const extent_t a = (!alone || rc.a.permute) ? task.rows * pr.k : 0;
      const extent_t b = rc.b.permute ? pr.k * n : 0;
      const extent_t r = (!alone || output_ == Output::buffered) ? task.rows * n : 0;
      scratch_bytes_ =
          std::max(scratch_bytes_, (a + b + r) * static_cast<extent_t>(sizeof(double)));
    }
  }
}

void ContractionPlan::estimate(const CostModel& model) {
  // The work of each task as contract() does it: operand permutations (or row stacking), one GEMM
  // per product, and the output's permutation when the result goes through scratch.
  const BlockShape& sa = *a_.shape;
  const BlockShape& sb = *b_.shape;
  const BlockShape& sc = *c_.shape;
  extent_t extents[max_rank];
  auto permute = [&](const BlockShape& shape, slot_t slot, const Axes& axes) {
    for (int q = 0; q < shape.rank(); ++q) extents[q] = shape.block_extent(slot, q);
    return model.permute_seconds(shape.rank(), extents, axes);
  };
  auto fill = [&](extent_t elements) {
    return model.permute_seconds(PermuteShape{PermuteKind::copy, elements, elements});
  };
  estimated_.clear();
  for (const Task& task : tasks_) {
    const Member* mem = &members_[static_cast<std::size_t>(task.first_member)];
    const std::int64_t count = task.last_member - task.first_member;
    const bool alone = count == 1;
    const bool through_r = !alone || output_ == Output::buffered;
    double seconds = through_r ? fill(task.rows * task.n) : 0.0;
    for (std::int64_t p = 0; p < task.products; ++p) {
      const Product& lead = products_[static_cast<std::size_t>(mem[0].first + p)];
      const Recipe& lr = recipes_[static_cast<std::size_t>(lead.recipe)];
      if (!alone) {
        for (std::int64_t g = 0; g < count; ++g) {
          const Product& pr = products_[static_cast<std::size_t>(mem[g].first + p)];
          seconds += permute(sa, pr.a_slot, recipes_[static_cast<std::size_t>(pr.recipe)].a_rows);
        }
      } else if (lr.a.permute) {
        seconds += permute(sa, lead.a_slot, lr.a.axes);
      }
      if (lr.b.permute) seconds += permute(sb, lead.b_slot, lr.b.axes);
      seconds += model.gemm_seconds(task.rows, task.n, lead.k);
    }
    if (through_r) {
      for (std::int64_t g = 0; g < count; ++g) {
        const tile_t* tiles = sc.block_tiles(mem[g].c_slot);
        for (std::size_t q = 0; q < r_positions_.size(); ++q)
          extents[q] = sc.space(r_positions_[q]).tile(tiles[r_positions_[q]]).extent;
        seconds += model.permute_seconds(sc.rank(), extents, output_axes_);
      }
    }
    estimated_.push_back(seconds);
  }
}

void ContractionPlan::record_measured(std::span<const double> seconds) {
  TILECC_CHECK(seconds.size() == tasks_.size(), "measured times for ", seconds.size(),
               " tasks given to a plan of ", tasks_.size(), " tasks.");
  measured_.assign(seconds.begin(), seconds.end());
}

std::span<const double> ContractionPlan::costs(bool refine) const {
  return refine && !measured_.empty() ? std::span<const double>(measured_)
                                      : std::span<const double>(estimated_);
}

ModelError ContractionPlan::model_error() const {
  std::vector<double> errors;
  for (std::size_t t = 0; t < measured_.size(); ++t)
    if (measured_[t] > 0.0) errors.push_back(std::abs(estimated_[t] - measured_[t]) / measured_[t]);
  ModelError e;
  e.tasks = static_cast<std::int64_t>(errors.size());
  if (errors.empty()) return e;
  std::sort(errors.begin(), errors.end());
  auto quantile = [&](double q) {
    return errors[std::min(errors.size() - 1,
                           static_cast<std::size_t>(q * static_cast<double>(errors.size())))];
  };
  e.median = quantile(0.5);
  e.p90 = quantile(0.9);
  return e;
}

std::string ContractionPlan::expression() const {
  return detail::show(c_) + " += " + detail::show(a_) + " * " + detail::show(b_);
}

std::string ContractionPlan::summary() const {
  char buf[768];
  const char* out = output_ == Output::direct       ? "direct"
                    : output_ == Output::transposed ? "transposed"
                                                    : "buffered";
  double predicted = 0.0;
  for (double s : estimated_) predicted += s;
  std::snprintf(buf, sizeof buf,
                "%s: %zu %stasks (%zu loop tuples), %lld products, %.3g of %.3g dense "
                "flops (%.1f%%), %lld operand permutations, output %s, scratch %.2f MiB/worker, "
                "predicted %.3g ms of task time, inspector %.3g ms",
                expression().c_str(), tasks_.size(), layout_ == PlanLayout::tce ? "TCE " : "",
                loop_.size(), static_cast<long long>(products_.size()), executed_flops_,
                dense_flops_, dense_flops_ > 0 ? 100.0 * executed_flops_ / dense_flops_ : 0.0,
                static_cast<long long>(permuted_operands_), out,
                static_cast<double>(scratch_bytes_) / 1048576.0, predicted * 1e3,
                inspector_seconds_ * 1e3);
  std::string text = buf;
  if (!policy_.empty()) text += ", policy " + policy_;
  if (const ModelError e = model_error(); e.tasks > 0) {
    std::snprintf(buf, sizeof buf, ", model error per task median %.0f%% p90 %.0f%%",
                  100.0 * e.median, 100.0 * e.p90);
    text += buf;
  }
  return text;
}

}  // namespace tilecc
