#include <fcntl.h>

#include <fmt/format.h>

#include "cli/checks.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "measure/registry.hpp"
#include "net/tcp_session.hpp"

namespace commgauge::cli {

void add_serve_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "serve",
      "Answer TCP-transport measurements from another host: run 'commgauge serve --port P' "
      "there, then 'commgauge <method> --transport tcp --peer HOST:P' here.");
  struct Flags {
    int port = 0;
    std::string bind;
    bool once = false;
    int announce_fd = -1;
    double io_timeout_s = 10;
    double accept_timeout_s = -1;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("--port", f->port, "TCP port to listen on (0: any free port, printed)")
      ->capture_default_str();
  cmd->add_option("--bind", f->bind, "address to listen on (default: all)");
  cmd->add_flag("--once", f->once, "serve one session, then exit with its status");
  cmd->add_option(
         "--io-timeout", f->io_timeout_s,
         "seconds a call may wait with no byte moving before the client counts as dead; at "
         "most 1e6")
      ->check(kTimeLimit)
      ->capture_default_str();
  cmd->add_option("--accept-timeout", f->accept_timeout_s,
                  "seconds to wait for a client (negative: forever); at most 1e6")
      ->check(kTimeLimitOrForever)
      ->capture_default_str();
  cmd->add_option("--announce-fd", f->announce_fd, "write the bound port to this file descriptor")
      ->group("");  // internal: used when a client starts its own local peer
  cmd->callback([&action, f] {
    action = [f](int&, char**&) {
      if (f->port < 0 || f->port > 65535) throw InputError("--port", "must be 0-65535");
      if (!(f->io_timeout_s > 0)) throw InputError("--io-timeout", "must be positive");
      // The port is written there only once the server listens: a descriptor that cannot take
      // it would leave the client that started this server waiting for nothing.
      if (f->announce_fd != -1) {
        const int mode = f->announce_fd >= 0 ? ::fcntl(f->announce_fd, F_GETFL) : -1;
        if (mode == -1)
          throw InputError("--announce-fd",
                           fmt::format("file descriptor {} is not open", f->announce_fd));
        if ((mode & O_ACCMODE) == O_RDONLY)
          throw InputError("--announce-fd", fmt::format("file descriptor {} is open only for "
                                                        "reading",
                                                        f->announce_fd));
      }
      net::ServeOptions o;
      o.bind_host = f->bind;
      o.port = static_cast<std::uint16_t>(f->port);
      o.once = f->once;
      o.announce_fd = f->announce_fd;
      o.io_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(f->io_timeout_s * 1000));
      o.accept_timeout =
          std::chrono::milliseconds(static_cast<std::int64_t>(f->accept_timeout_s * 1000));
      return net::serve(o, measure::run_dest_job);
    };
  });
}

}  // namespace commgauge::cli
