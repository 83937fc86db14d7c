#pragma once
// A transport that fails on demand, for tests of what a method keeps when its peer stops.

#include <string>
#include <string_view>
#include <utility>

#include "common/error.hpp"
#include "measure/progress.hpp"
#include "net/transport.hpp"

namespace commgauge::testing {

// Another transport's side, every call passed on; before_call() runs before each call that
// communicates (test doubles override it, or compute()).
class ForwardingTransport : public net::Transport {
 public:
  explicit ForwardingTransport(net::Transport& t) : t_(t) {}
  std::string kind() const override { return t_.kind(); }
  net::Role role() const override { return t_.role(); }
  int rank() const override { return t_.rank(); }
  int peer() const override { return t_.peer(); }
  void send(std::size_t bytes) override { before_call(), t_.send(bytes); }
  void recv(std::size_t bytes) override { before_call(), t_.recv(bytes); }
  net::Request isend(std::size_t bytes) override { return before_call(), t_.isend(bytes); }
  net::Request irecv(std::size_t bytes) override { return before_call(), t_.irecv(bytes); }
  void wait(net::Request& r) override { before_call(), t_.wait(r); }
  bool test(net::Request& r) override { return before_call(), t_.test(r); }
  void barrier() override { before_call(), t_.barrier(); }
  double now_us() override { return t_.now_us(); }
  void compute(double us) override { t_.compute(us); }
  void send_value(std::uint64_t v) override { before_call(), t_.send_value(v); }
  std::uint64_t recv_value() override { return before_call(), t_.recv_value(); }
  const net::Clock& clock() const override { return t_.clock(); }
  net::Counters counters() const override { return t_.counters(); }
  nlohmann::json context() const override { return t_.context(); }

 protected:
  virtual void before_call() const {}

 private:
  net::Transport& t_;
};

// The source's side of a virtual link that fails (TransportError, as a peer that stopped
// answering) at its first call once `fail` is set: FailAt, the method's progress sink, sets it
// when the method reports a label containing `at`.
class FailingTransport final : public ForwardingTransport {
 public:
  FailingTransport(net::Transport& t, const bool& fail) : ForwardingTransport(t), fail_(fail) {}

 private:
  void before_call() const override {
    if (fail_) throw TransportError("the peer did not respond (test)");
  }
  const bool& fail_;
};

class FailAt final : public measure::ProgressSink {
 public:
  FailAt(std::string at, bool& fail) : at_(std::move(at)), fail_(fail) {}
  void update(std::string_view label, double) override {
    if (label.find(at_) != std::string_view::npos) fail_ = true;
  }
  void done() override {}

 private:
  std::string at_;
  bool& fail_;
};

}  // namespace commgauge::testing
