// reverie: answers "what if" questions about deep-learning training
// performance from one profiled step. See README.md.
//
// Dispatch: argv[1] names the command; its options are parsed by CLI11 on an
// app the command set up (command.h). Every usage error, CLI11's own
// included, is one line "reverie: CMD: <problem>" and exit 2; what a command
// returns goes through ExitStatusOf.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/printable.h"
#include "cli/command.h"
#include "cli/huge_pages.h"

namespace reverie::cli {

std::vector<Command>& Registry() {
  static auto* commands = new std::vector<Command>();  // leaked: no exit-order hazards
  return *commands;
}

namespace {

// Payloads a command's status carries to main (type URLs, not user text).
constexpr char kUsagePayload[] = "reverie/usage-error";
constexpr char kExitPayload[] = "reverie/exit-status";
constexpr char kDetailPayload[] = "reverie/detail";

}  // namespace

absl::Status UsageError(const std::string& problem) {
  absl::Status s = absl::InvalidArgumentError(problem);
  s.SetPayload(kUsagePayload, absl::Cord("1"));
  return s;
}

bool IsUsageError(const absl::Status& s) { return s.GetPayload(kUsagePayload).has_value(); }

absl::Status WithExitStatus(absl::Status s, int exit_status) {
  s.SetPayload(kExitPayload, absl::Cord(absl::StrCat(exit_status)));
  return s;
}

absl::Status Prefixed(const std::string& prefix, const absl::Status& s) {
  absl::Status out(s.code(), absl::StrCat(prefix, s.message()));
  s.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

absl::Status WithDetail(absl::Status s, const std::string& detail) {
  if (!detail.empty()) s.SetPayload(kDetailPayload, absl::Cord(detail));
  return s;
}

std::string DetailOf(const absl::Status& s) {
  auto p = s.GetPayload(kDetailPayload);
  return p.has_value() ? std::string(*p) : "";
}

int ExitStatusOf(const absl::Status& s) {
  if (s.ok()) return kExitOk;
  int code = kExitBadInput;
  if (auto p = s.GetPayload(kExitPayload); p.has_value()) {
    if (!absl::SimpleAtoi(std::string(*p), &code)) code = kExitFailure;
  }
  return code;
}

namespace {

void PrintUsage() {
  std::printf("usage: reverie COMMAND [ARGS...]\n\ncommands:\n");
  std::vector<Command> sorted = Registry();
  std::sort(sorted.begin(), sorted.end(),
            [](const Command& a, const Command& b) { return a.name < b.name; });
  for (const Command& c : sorted) std::printf("  %-10s %s\n", c.name.c_str(), c.summary.c_str());
  std::printf("\n'reverie COMMAND --help' shows a command's arguments and options; an option "
              "takes its value\nas --flag VALUE or --flag=VALUE.\n"
              "A TRACE is a PyTorch-profiler (Kineto) .json / .json.gz or a reverie .pb.\n");
}

// CLI11's parse error as the problem part of the one line: an unknown option
// or a stray argument quoted, a missing value said plainly ("--top needs a
// value", not "--top: 1 required N missing"), the rest as CLI11 words it.
std::string DescribeParseError(const CLI::ParseError& e, const CLI::App& app,
                               const std::string& command) {
  const std::string hint = absl::StrCat("; see 'reverie ", command, " --help'");
  for (const std::string& extra : app.remaining()) {
    if (extra == "--") continue;
    // An unknown option explains the other errors (a value it was meant to
    // take left over, a requirement it was meant to meet), so it comes first.
    if (extra.size() > 1 && extra[0] == '-') {
      return absl::StrCat("unknown option '", extra, "'", hint);
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      return absl::StrCat("unexpected argument '", extra, "'", hint);
    }
  }
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // "--top: 1 required N missing"
    const size_t colon = what.find(": ");
    if (colon != std::string::npos && what.size() > 8 &&
        what.compare(what.size() - 8, 8, " missing") == 0) {
      return absl::StrCat(what.substr(0, colon), " needs a value");
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) return what + hint;
  return what;
}

bool AsksForHelp(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "-h" || a == "--help") return true;
  }
  return false;
}

// Parses `args` for `command` and runs it; returns the exit status.
int RunCommand(const Command& command, const std::vector<std::string>& args) {
  CLI::App app(command.summary, "reverie " + command.name);
  // Options given twice: the last wins, as before CLI11 (repeatable ones,
  // --script and --set, say so themselves).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(34);
  const RunFn run = command.setup(app);
  auto fail = [&](const std::string& problem) {
    std::fprintf(stderr, "reverie: %s: %s\n", command.name.c_str(), TerminalLine(problem).c_str());
    return kExitBadInput;
  };
  try {
    // CLI11 wants them back to front.
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // --help wins over a bad value beside it.
    if (AsksForHelp(args)) {
      std::fputs(app.help().c_str(), stdout);
      return kExitOk;
    }
    return fail(DescribeParseError(e, app, command.name));
  }
  absl::Status status;
  try {
    status = run();
  } catch (const std::bad_alloc&) {
    // The pipeline names the trace or script that ran out of memory; this
    // is what ran outside it (a report being written, say): name the inputs.
    std::string inputs;
    for (const std::string& a : args) {
      if (!a.empty() && a[0] != '-') absl::StrAppend(&inputs, inputs.empty() ? "" : " ", a);
    }
    std::fprintf(stderr, "reverie: %s: out of memory (with %s)\n", command.name.c_str(),
                 TerminalLine(inputs.empty() ? std::string("no input") : inputs).c_str());
    return kExitBadInput;
  } catch (const std::exception& e) {
    // Our code reports errors with absl::Status; this only catches what a
    // library threw.
    std::fprintf(stderr, "reverie: internal error: %s\n", TerminalLine(e.what()).c_str());
    return kExitBadInput;
  }
  if (status.ok()) return kExitOk;
  if (IsUsageError(status)) return fail(std::string(status.message()));
  if (!status.message().empty()) {
    std::fprintf(stderr, "reverie: %s\n", TerminalLine(std::string(status.message())).c_str());
  }
  if (const std::string detail = DetailOf(status); !detail.empty()) {
    std::fprintf(stderr, "%s\n", EscapeControl(detail, /*keep_newlines=*/true).c_str());
  }
  return ExitStatusOf(status);
}

const Command* Find(const std::string& name) {
  for (const Command& c : Registry()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace
}  // namespace reverie::cli

int main(int argc, char** argv) {
  using namespace reverie::cli;
  RunWithHugePages(argv);
  if (argc < 2) {
    std::fprintf(stderr, "reverie: no command given; see 'reverie --help'\n");
    return kExitBadInput;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    // `reverie help CMD` is `reverie CMD --help`.
    if (argc > 2 && Find(argv[2]) != nullptr) return RunCommand(*Find(argv[2]), {"--help"});
    PrintUsage();
    return kExitOk;
  }
  if (name == "--version") {
    std::printf("reverie %s\n", REVERIE_VERSION);
    return kExitOk;
  }
  if (const Command* c = Find(name); c != nullptr) {
    return RunCommand(*c, std::vector<std::string>(argv + 2, argv + argc));
  }
  std::fprintf(stderr, "reverie: unknown command '%s'; see 'reverie --help'\n",
               reverie::TerminalLine(name).c_str());
  return kExitBadInput;
}
