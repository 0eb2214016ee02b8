#pragma once

// CLI::App for headers that only name it. CLI11 is header-only and defines its validators as
// objects in every translation unit that includes it: ~11 s of compile each at -O3 on two cores.
// Headers declare option registration with this, and only the sources that register or parse
// options include <CLI/CLI.hpp>.

namespace CLI {
class App;
}  // namespace CLI
