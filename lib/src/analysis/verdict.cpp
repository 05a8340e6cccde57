#include "fmtcheck/analysis/verdict.hpp"

#include <algorithm>

#include "fmtcheck/analysis/report_text.hpp"

// Sentences are built by appending to a std::string: g++ 12 flags
// "literal" + std::string&& with a false -Wrestrict inside std::string.
namespace fmtcheck {
namespace {

std::string tensors(std::size_t n) {
  std::string s = std::to_string(n);
  s += n == 1 ? " tensor" : " tensors";
  return s;
}

std::string pow2(int k) {
  std::string s = "2^";
  s += std::to_string(k);
  return s;
}

// One format's sentences.
std::string format_verdict(const std::vector<const TensorOutcome*>& mine, const Format& f, const std::string& scale) {
  const std::string& format = f.name;
  ConversionStats all;
  std::size_t too_large_in = 0, underflow_in = 0;
  std::uint64_t underflow_at_best = 0;
  std::optional<int> lo, hi;
  bool block_scaled = false;
  for (const TensorOutcome* t : mine) {
    all += t->stats;
    too_large_in += t->stats.overflow + t->stats.saturated > 0 ? 1 : 0;
    underflow_in += t->stats.underflow_to_zero > 0 ? 1 : 0;
    underflow_at_best += t->underflow_at_best;
    block_scaled = block_scaled || t->block_scaled;
    if (t->best) {
      lo = std::min(lo.value_or(*t->best), *t->best);
      hi = std::max(hi.value_or(*t->best), *t->best);
    }
  }
  const std::uint64_t too_large = all.overflow + all.saturated;
  std::string text = block_scaled ? "with per-block scales (" : "at scale ";
  text += scale;
  text += block_scaled ? ")" : "";
  if (too_large == 0 && all.underflow_to_zero == 0) {
    text.insert(0, "fits ");
    text += ": no value overflows or underflows to zero; ";
    text += std::to_string(all.subnormal);
    text += " subnormal, rms relative error ";
    text += compact(all.rms_rel_error());
    return text += ".";
  }
  std::vector<std::string> parts;
  if (all.overflow > 0) parts.push_back(share(all.overflow, all.values) + " overflow");
  if (all.saturated > 0) parts.push_back(share(all.saturated, all.values) + " saturate");
  if (too_large > 0) parts.back() += " (" + tensors(too_large_in) + ")";
  if (all.underflow_to_zero > 0) {
    parts.push_back(share(all.underflow_to_zero, all.values) + " underflow to zero (" + tensors(underflow_in) + ")");
  }
  text += ":";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    text += i == 0 ? " " : ", ";
    text += parts[i];
  }
  text += ".";
  if (block_scaled || !lo) return text;
  if (!f.is_signed && too_large > 0) {
    text += " ";
    text += format;
    return text += " has no sign: no scale gives negative values a code.";
  }
  const std::string beyond = "'s range even with amax at its top; they need a format with more exponent bits.";
  if (too_large == 0 && underflow_at_best == all.underflow_to_zero) {
    text += " No power-of-two scale does better: these values lie below ";
    text += format;
    return text += beyond;
  }
  if (*lo == *hi) {
    text += " Scaling by ";
    text += pow2(*lo);
  } else {
    text += " Scaling each tensor by its own power of two, ";
    text += pow2(*lo);
    text += " to ";
    text += pow2(*hi);
    text += " (--scale auto),";
  }
  text += " leaves no overflow and ";
  if (underflow_at_best == 0) return text += "no underflow.";
  text += share(underflow_at_best, all.values);
  text += " underflow to zero: values that lie below ";
  text += format;
  return text += beyond;
}

}  // namespace

std::string verdict(const std::vector<TensorOutcome>& outcomes, const std::vector<Format>& formats,
                    const std::string& scale, std::size_t width) {
  std::size_t name_width = 0;
  for (const Format& f : formats) name_width = std::max(name_width, f.name.size());
  std::string out;
  for (const Format& f : formats) {
    std::vector<const TensorOutcome*> mine;
    for (const TensorOutcome& t : outcomes) {
      if (t.format == f.name) mine.push_back(&t);
    }
    out += wrap(f.name + std::string(name_width + 2 - f.name.size(), ' '), format_verdict(mine, f, scale), width);
  }
  return out;
}

std::string applied_scale(const std::string& scale, int block, const std::string& scale_rule) {
  if (block <= 0) return scale == "none" ? "1" : scale;
  std::string s = "block";
  s += std::to_string(block);
  s += ":";
  return s += scale_rule;
}

}  // namespace fmtcheck
