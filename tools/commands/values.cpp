// fmtcheck values: every code of a small format with its class and exact value.
#include <cstdio>

#include "common/command.hpp"
#include "common/options.hpp"
#include "common/table.hpp"
#include "fmtcheck/core/decode.hpp"

namespace fmtcheck::cli {
namespace {

int run_values(const std::string& name, bool csv) {
  const Format f = parse_format_option(name);
  Table table({"code", "class", "value"});
  for (const std::uint64_t bits : every_code(f)) {
    table.add_row({to_hex(f, bits), std::string(to_string(classify(f, bits))), to_exact_decimal(f, bits)});
  }
  std::fputs(csv ? table.csv().c_str() : table.aligned().c_str(), stdout);
  return 0;
}

const bool registered = register_command({
    "values", "every code of a format of at most 16 bits: class and exact value", 20, [](CLI::App& sub) {
      auto name = std::make_shared<std::string>();
      auto csv = std::make_shared<bool>(false);
      sub.add_option("FORMAT", *name, "format name or spec (e4m3, fp16, e3m4fn, ...)")->required();
      sub.add_flag("--csv", *csv, "CSV output");
      return std::function<int()>([=] { return run_values(*name, *csv); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
