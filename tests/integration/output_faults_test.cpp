// Every output of every command on a full disk (a tmpfs the test mounts and fills) and with a
// symlink at its path: a full disk is a runtime error (exit 1) that names the file and leaves
// nothing behind; a symlink is replaced, never followed.

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "process.hpp"

namespace commgauge::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kNet = std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggp-simple.json";
const std::string kScheme = std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/fig2-1.sch";

// One output of one command: `argv` with "@OUT" where the output's path goes.
struct Output {
  std::string what;
  std::vector<std::string> argv;
  std::string name;  // the output's file (or directory) name
  bool directory = false;
};

class OutputFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    // A fixed name, so that a crashed or killed earlier run's mount and files are found and
    // removed first (the tests run serially).
    dir_ = fs::temp_directory_path() / "cg-output-faults";
    run({"umount", "-l", (dir_ / "full").string()});
    std::error_code ec;
    fs::remove_all(dir_, ec);
    fs::create_directories(dir_ / "in");
    trace_ = (dir_ / "in" / "trace").string();
    profile_ = (dir_ / "in" / "profile.json").string();
    ASSERT_EQ(run({commgauge(), "synth", "ring", "--ranks", "2", "--ranks-per-node", "2",
                   "--iterations", "20", "-o", trace_})
                  .exit_code,
              0);
    const Outcome p = run({commgauge(), "profile", "--transport", "virtual", "--virtual-net", kNet,
                           "--max-size", "4KiB", "-o", profile_});
    ASSERT_EQ(p.exit_code, 0) << p.err;
  }
  void TearDown() override {
    if (mounted_) run({"umount", "-l", (dir_ / "full").string()});
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A 1 MiB tmpfs at dir_/full, filled with 4 KiB files (one page each) until it refuses more;
  // then `free_pages` of them are removed again.
  void mount_full_disk(int free_pages = 0) {
    const fs::path full = dir_ / "full";
    fs::create_directories(full);
    const Outcome m = mount_tmpfs(full.string(), "1m");
    if (m.exit_code != 0) {
      if (in_ci()) FAIL() << "cannot mount a tmpfs: " << m.err;
      GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << m.err;
    }
    mounted_ = true;
    fs::create_directories(full / "filler");
    const std::string page(4096, 'x');
    for (int i = 0;; ++i) {
      const fs::path f = full / "filler" / std::to_string(i);
      const int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ASSERT_GE(fd, 0);
      const bool whole = ::write(fd, page.data(), page.size()) == static_cast<ssize_t>(page.size());
      ::close(fd);
      if (!whole) {
        fs::remove(f);
        break;
      }
      ASSERT_LT(i, 1000) << "the tmpfs never filled";
    }
    for (int i = 0; i < free_pages; ++i)
      fs::remove(full / "filler" / std::to_string(i));
  }

  // What is under dir_/full besides the filler: files, and directories a failed run created.
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "full")) {
      if (e.path().filename() == "filler" || e.path().parent_path().filename() == "filler")
        continue;
      out.push_back(e.path().string());
    }
    return out;
  }

  std::vector<Output> outputs() const {
    const std::vector<std::string> virt = {"--transport", "virtual", "--virtual-net", kNet};
    auto measuring = [&](std::vector<std::string> head, std::vector<std::string> tail) {
      head.insert(head.end(), virt.begin(), virt.end());
      head.insert(head.end(), tail.begin(), tail.end());
      return head;
    };
    std::vector<Output> all = {
        {"timer --json", measuring({"timer"}, {"--trials", "1000", "--json", "@OUT"}), "t.json"},
        {"latency --json", measuring({"latency"}, {"--sizes", "8", "--json", "@OUT"}), "l.json"},
        {"latency --output-dir", measuring({"latency"}, {"--sizes", "8", "--output-dir", "@OUT"}),
         "latency", true},
        {"loggp --json", measuring({"loggp"}, {"--max-size", "1KiB", "--json", "@OUT"}), "g.json"},
        {"loggp --csv", measuring({"loggp"}, {"--max-size", "1KiB", "--csv", "@OUT"}), "g.csv"},
        {"loggp --plot", measuring({"loggp"}, {"--max-size", "1KiB", "--plot", "@OUT"}), "g.png"},
        {"overlap --json", measuring({"overlap"}, {"--sizes", "1KiB", "--json", "@OUT"}), "o.json"},
        {"profile -o", measuring({"profile"}, {"--max-size", "1KiB", "-o", "@OUT"}), "p.json"},
        {"predict pingpong --json",
         {"predict", "pingpong", "--profile", profile_, "--json", "@OUT"},
         "pp.json"},
        {"predict pingpong --plot",
         {"predict", "pingpong", "--profile", profile_, "--plot", "@OUT"},
         "pp.svg"},
        {"predict isend-compute-wait --json",
         {"predict", "isend-compute-wait", "--profile", profile_, "--comp-us", "10", "--json",
          "@OUT"},
         "icw.json"},
        {"simulate --json",
         {"simulate", trace_, "--profile", profile_, "--json", "@OUT"},
         "s.json"},
        {"simulate --timeline",
         {"simulate", trace_, "--profile", profile_, "--timeline", "@OUT"},
         "timeline.json"},
        {"simulate --timeline-plot",
         {"simulate", trace_, "--profile", profile_, "--timeline-plot", "@OUT"},
         "timeline.svg"},
        {"synth -o", {"synth", "ring", "--ranks", "2", "-o", "@OUT"}, "synth", true},
        {"synth --json",
         {"synth", "ring", "--ranks", "2", "-o", (dir_ / "in" / "t2").string(), "--force", "--json",
          "@OUT"},
         "synth.json"},
        {"trace-summary --json", {"trace-summary", trace_, "--json", "@OUT"}, "sum.json"},
        {"trace-summary --csv", {"trace-summary", trace_, "--csv", "@OUT"}, "matrix.csv"},
        {"trace-summary --plot", {"trace-summary", trace_, "--plot", "@OUT"}, "matrix.svg"},
        {"trace-check --json", {"trace-check", trace_, "--json", "@OUT"}, "check.json"},
        {"trace-export", {"trace-export", trace_, "@OUT"}, "export", true},
        {"share --json",
         {"share", "--predict", "--scheme", kScheme, "--model", "all", "--json", "@OUT"},
         "share.json"},
    };
    if (COMMGAUGE_WITH_OTF2) {
      all.push_back({"trace-export --format otf2",
                     {"trace-export", trace_, "@OUT", "--format", "otf2"},
                     "otf2",
                     true});
    }
    return all;
  }

  static std::vector<std::string> with_output(const Output& o, const fs::path& path) {
    std::vector<std::string> argv = {commgauge()};
    for (const auto& a : o.argv)
      argv.push_back(a == "@OUT" ? path.string() : a);
    return argv;
  }

  fs::path dir_;
  std::string trace_, profile_;
  bool mounted_ = false;
};

TEST_F(OutputFaults, AFullDiskIsARuntimeErrorNamingTheFileAndLeavesNothing) {
  mount_full_disk();
  if (IsSkipped() || HasFatalFailure()) return;
  const auto cases = outputs();
  ASSERT_GE(cases.size(), 19u);
  for (const auto& c : cases) {
    // A directory output goes into a directory that is not there yet: neither may be left.
    const fs::path out =
        c.directory ? dir_ / "full" / (c.name + "-in") / c.name : dir_ / "full" / c.name;
    const Outcome o = run(with_output(c, out));
    EXPECT_EQ(o.exit_code, 1) << c.what << ": " << o.err;
    EXPECT_THAT(o.err, HasSubstr(out.string())) << c.what;
    EXPECT_THAT(o.err, ::testing::ContainsRegex("No space left on device|cannot extend")) << c.what;
    const auto left = leftovers();
    EXPECT_THAT(left, ::testing::IsEmpty()) << c.what;
    std::error_code ec;
    for (const auto& path : left)  // so that the next case is judged by its own
      fs::remove_all(path, ec);
  }
}

TEST_F(OutputFaults, AnExportThatFillsTheDiskHalfWayLeavesTheDirectoryAsItWas) {
  // Room for rank 0's file but not rank 1's, and a user's earlier rank-0.txt there: the export
  // fails at rank 1, nothing of it is published, and the user's file is untouched.
  const fs::path probe = dir_ / "in" / "probe";
  ASSERT_EQ(run({commgauge(), "trace-export", trace_, probe.string()}).exit_code, 0);
  const auto rank_bytes = fs::file_size(probe / "rank-0.txt");
  ASSERT_GT(rank_bytes, 0u);
  mount_full_disk(static_cast<int>((rank_bytes + 4095) / 4096) + 1);
  if (IsSkipped() || HasFatalFailure()) return;
  const fs::path out = dir_ / "full" / "export";
  fs::create_directories(out);
  std::ofstream(out / "rank-0.txt") << "mine";
  // Without --force a directory holding a file is refused before anything is read.
  const Outcome refused = run({commgauge(), "trace-export", trace_, out.string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("is not empty (give --force"));
  const Outcome o = run({commgauge(), "trace-export", trace_, out.string(), "--force"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_THAT(o.err, HasSubstr((out / "rank-1.txt").string()));
  EXPECT_THAT(leftovers(),
              ::testing::UnorderedElementsAre(out.string(), (out / "rank-0.txt").string()));
  std::ifstream in(out / "rank-0.txt");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(text, "mine");
}

TEST_F(OutputFaults, ASymlinkAtAnOutputIsReplacedNotFollowed) {
  fs::create_directories(dir_ / "out");
  std::size_t files = 0;
  for (const auto& c : outputs()) {
    if (c.directory) continue;
    ++files;
    const fs::path out = dir_ / "out" / c.name;
    const fs::path victim = dir_ / "out" / ("victim-" + c.name);
    // profile -o updates the file there: it reads through the link (a profile), writes beside it.
    std::string mine = "mine";
    if (c.what == "profile -o") {
      std::ifstream in(profile_);
      mine.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    std::ofstream(victim) << mine;
    fs::remove(out);
    fs::create_symlink(victim, out);
    const Outcome o = run(with_output(c, out));
    EXPECT_EQ(o.exit_code, 0) << c.what << ": " << o.err;
    EXPECT_FALSE(fs::is_symlink(out)) << c.what;
    EXPECT_GT(fs::file_size(out), 0u) << c.what;
    std::ifstream in(victim);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    EXPECT_EQ(text, mine) << c.what;
  }
  EXPECT_GE(files, 15u);
}

// A device at an output's path is written into, never replaced (as root a rename over /dev/null
// would replace it with a regular file): a node like /dev/null takes the output (exit 0) and
// stays a device; one like /dev/full is a runtime error naming it (exit 1), still a device. A
// directory there, or a FIFO nobody reads, is an input error (exit 2), never a hang.
TEST_F(OutputFaults, ADeviceAtAnOutputIsWrittenInPlaceNeverReplaced) {
  fs::create_directories(dir_ / "dev");
  std::size_t files = 0;
  for (const auto& c : outputs()) {
    if (c.directory || c.what == "profile -o") continue;  // profile -o reads its file first
    ++files;
    const fs::path null_node = dir_ / "dev" / ("null-" + c.name);
    const fs::path full_node = dir_ / "dev" / ("full-" + c.name);
    if (::mknod(null_node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
        ::mknod(full_node.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
      GTEST_SKIP() << "cannot create device nodes here (not root?)";
    }
    const Outcome ok = run(with_output(c, null_node));
    EXPECT_EQ(ok.exit_code, 0) << c.what << ": " << ok.err;
    EXPECT_TRUE(fs::is_character_file(null_node)) << c.what;
    const Outcome full = run(with_output(c, full_node));
    EXPECT_EQ(full.exit_code, 1) << c.what << ": " << full.err;
    EXPECT_THAT(full.err, HasSubstr(full_node.string())) << c.what;
    EXPECT_TRUE(fs::is_character_file(full_node)) << c.what;
    const fs::path directory = dir_ / "dev" / ("dir-" + c.name);
    fs::create_directories(directory);
    const Outcome dir = run(with_output(c, directory));
    EXPECT_EQ(dir.exit_code, 2) << c.what << ": " << dir.err;
    EXPECT_THAT(dir.err, HasSubstr(directory.string())) << c.what;
    EXPECT_TRUE(fs::is_directory(directory)) << c.what;
    // A FIFO with no reader: an error at once (its open would otherwise wait for one forever).
    const fs::path fifo = dir_ / "dev" / ("fifo-" + c.name);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0) << fifo;
    const Outcome no_reader = run(with_output(c, fifo), std::chrono::seconds(60));
    EXPECT_EQ(no_reader.exit_code, 2) << c.what << ": " << no_reader.err;
    EXPECT_THAT(no_reader.err, HasSubstr(fifo.string())) << c.what;
    EXPECT_TRUE(fs::is_fifo(fifo)) << c.what;
  }
  EXPECT_GE(files, 15u);
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "dev"))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
}

// Whether the strace log (strace -f -e trace=openat,fsync,rename,renameat,renameat2) shows `out`
// renamed into place and then its directory opened and synced, so that the rename survives a
// crash of the machine.
bool directory_synced_after_rename(const fs::path& log, const fs::path& out) {
  std::ifstream in(log);
  const std::string dir = out.parent_path().string();
  const std::regex open_dir("openat\\(AT_FDCWD, \"" + dir +
                            "\", [^)]*O_DIRECTORY[^)]*\\) = ([0-9]+)");
  bool renamed = false;
  std::string fd;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.find("rename") != std::string::npos &&
        line.find("\"" + out.string() + "\") = 0") != std::string::npos) {
      renamed = true;
      fd.clear();
    } else if (renamed && std::regex_search(line, m, open_dir)) {
      fd = m[1];
    } else if (renamed && !fd.empty() &&
               std::regex_search(line, std::regex("fsync\\(" + fd + "\\) *= 0"))) {
      return true;
    }
  }
  return false;
}

TEST_F(OutputFaults, EveryOutputSyncsItsDirectoryAfterTheRename) {
  if (run({"strace", "-V"}).exit_code != 0) {
    if (in_ci()) FAIL() << "strace is missing (scripts/setup installs it)";
    GTEST_SKIP() << "strace is missing";
  }
  fs::create_directories(dir_ / "out");
  std::size_t checked = 0;
  for (const auto& c : outputs()) {
    // trace-export publishes its files together and syncs the directory once, after the last
    // (hostfile.txt); the other directory outputs (latency --output-dir, trace) write through
    // the same AtomicFile or the tracer's own files.
    const fs::path out = dir_ / "out" / c.name;
    const fs::path synced = c.what == "trace-export" ? out / "hostfile.txt" : out;
    if (c.directory && c.what != "trace-export") continue;
    const fs::path log = dir_ / "strace.log";
    std::vector<std::string> argv = {
        // --seccomp-bpf: only the traced calls stop the program (profile's threads would crawl).
        "strace",
        "-f",
        "--seccomp-bpf",
        "-e",
        "trace=openat,fsync,rename,renameat,renameat2",
        "-o",
        log.string()};
    const auto command = with_output(c, out);
    argv.insert(argv.end(), command.begin(), command.end());
    const Outcome o = run(argv);
    EXPECT_EQ(o.exit_code, 0) << c.what << ": " << o.err;
    EXPECT_TRUE(directory_synced_after_rename(log, synced)) << c.what << ": " << synced;
    ++checked;
  }
  EXPECT_GE(checked, 16u);
}

// A run ended by SIGTERM or SIGINT (Ctrl-C) removes its temporaries and ends by that signal
// (red-team, 2026-12-05: an interrupted synth left a 958 MB .tmp, simulate --timeline a 190 MB one,
// trace-export 1902 of them, and the next run without --force was refused).
TEST_F(OutputFaults, AnInterruptedRunLeavesNoTemporaries) {
  const std::string ring = (dir_ / "in" / "big-ring").string();
  ASSERT_EQ(
      run({commgauge(), "synth", "ring", "--ranks", "4000", "--iterations", "300", "-o", ring})
          .exit_code,
      0);
  struct Interrupted {
    std::vector<std::string> argv;
    fs::path watched;  // the directory the temporaries appear in
    int sig;
  };
  const std::vector<Interrupted> cases = {
      {{commgauge(), "synth", "ring", "--ranks", "1000000", "--iterations", "20", "-o",
        (dir_ / "synth-out").string()},
       dir_ / "synth-out",
       SIGTERM},
      {{commgauge(), "simulate", ring, "--model", "none", "--timeline",
        (dir_ / "timeline" / "tl.json").string()},
       dir_ / "timeline",
       SIGINT},
      {{commgauge(), "trace-export", ring, (dir_ / "export").string(), "--no-check"},
       dir_ / "export",
       SIGTERM}};
  fs::create_directories(dir_ / "timeline");
  const auto temporaries = [](const fs::path& dir) {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      n += entry.path().extension() == ".tmp" ? 1 : 0;
    return n;
  };
  for (const auto& c : cases) {
    Background job(c.argv);
    // Signalled once its first temporary exists (the command has started writing).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(100);
    while (temporaries(c.watched) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_GT(temporaries(c.watched), 0u) << c.argv[1] << " wrote no temporary";
    job.signal(c.sig);
    EXPECT_EQ(job.wait_for_exit(std::chrono::seconds(60)), 128 + c.sig)
        << c.argv[1] << " ended otherwise than by the signal (finished before it?)";
    EXPECT_EQ(temporaries(c.watched), 0u) << c.argv[1];
  }
}

}  // namespace
}  // namespace commgauge::testing
