// `fmtcheck hw SUBCOMMAND`: the hardware comparisons. Each subcommand lives in
// its own file in hw/ and registers itself here, as the top-level commands
// do with register_command; hw/hw.cpp turns them into `hw` subcommands.
#pragma once

#include <vector>

#include "common/command.hpp"

namespace fmtcheck::cli {

bool register_hw_command(Command c);
std::vector<Command>& hw_commands();

}  // namespace fmtcheck::cli
