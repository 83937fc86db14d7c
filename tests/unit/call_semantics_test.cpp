// One meaning per MPI call (trace/call_semantics): every entry of the function list has a kind,
// and the kinds agree with the list's classes and with the collectives the replay and the
// exporter know.

#include <string>

#include <gtest/gtest.h>

#include "collectives/algorithms.hpp"
#include "trace/call_semantics.hpp"
#include "trace/function_ids.hpp"

namespace commgauge::trace {
namespace {

TEST(CallSemantics, EveryFunctionHasTheMeaningOfItsClassAndPattern) {
  int modeled = 0, collective = 0;
  for (const FunctionInfo& f : function_table()) {
    const CallSemantics& s = semantics_of(f.id);
    const std::string name(f.name);
    switch (f.function_class) {
      case FunctionClass::opaque:
        EXPECT_EQ(s.kind, CallKind::opaque) << name;
        break;
      case FunctionClass::local:
        EXPECT_EQ(s.kind, CallKind::none) << name;
        break;
      case FunctionClass::special:
        break;
      case FunctionClass::modeled:
        ++modeled;
        // The collectives are exactly the operations src/collectives knows by their pattern.
        EXPECT_EQ(s.collective, collectives::parse_operation(f.pattern).has_value()) << name;
        collective += s.collective;
        break;
    }
    EXPECT_EQ(s.collective, s.kind == CallKind::collective) << name;
  }
  EXPECT_GT(modeled, 60);
  EXPECT_EQ(collective, 34);  // 17 operations (Scan, Exscan with Allreduce's pattern), each with
                              // its nonblocking form
}

TEST(CallSemantics, OnlyTheWaitAndTestFamiliesAndRequestFreeCompleteRequests) {
  for (const std::uint32_t id : {fn::Wait, fn::Waitall, fn::Waitany, fn::Waitsome, fn::Test,
                                 fn::Testall, fn::Testany, fn::Testsome, fn::Request_free})
    EXPECT_TRUE(semantics_of(id).completes_requests) << function_name(id);
  for (const std::uint32_t id :
       {fn::Recv, fn::Sendrecv, fn::Probe, fn::Test_cancelled, fn::Irecv, fn::Allreduce})
    EXPECT_FALSE(semantics_of(id).completes_requests) << function_name(id);
}

// Which calls progress (take arrived messages) as Open MPI's ob1 does: waits, tests, probes,
// blocking point-to-point calls and collectives; not the posting calls nor local ones.
TEST(CallSemantics, WaitsTestsProbesBlockingCallsAndCollectivesProgressPostingCallsDoNot) {
  for (const std::uint32_t id :
       {fn::Wait, fn::Waitall, fn::Waitany, fn::Test, fn::Testsome, fn::Probe, fn::Iprobe,
        fn::Improbe, fn::Recv, fn::Send, fn::Ssend, fn::Sendrecv, fn::Mrecv, fn::Allreduce,
        fn::Iallreduce, fn::Barrier, fn::Comm_split, fn::Init, fn::Finalize})
    EXPECT_TRUE(progresses(semantics_of(id).kind)) << function_name(id);
  for (const std::uint32_t id :
       {fn::Isend, fn::Issend, fn::Irecv, fn::Imrecv, fn::Send_init, fn::Recv_init, fn::Start,
        fn::Startall, fn::Cancel, fn::Request_free, fn::Comm_free, fn::Comm_rank})
    EXPECT_FALSE(progresses(semantics_of(id).kind)) << function_name(id);
}

TEST(CallSemantics, InitThreadIsInitAndCommunicatorsHaveTheirKinds) {
  EXPECT_EQ(semantics_of(fn::Init).kind, CallKind::init);
  EXPECT_EQ(semantics_of(fn::Init_thread).kind, CallKind::init);
  EXPECT_EQ(semantics_of(fn::Finalize).kind, CallKind::finalize);
  EXPECT_EQ(semantics_of(fn::Abort).kind, CallKind::abort);
  EXPECT_EQ(semantics_of(fn::Comm_split).kind, CallKind::comm_creation);
  EXPECT_EQ(semantics_of(fn::Cart_create).kind, CallKind::comm_creation);
  EXPECT_EQ(semantics_of(fn::Comm_free).kind, CallKind::comm_free);
  EXPECT_EQ(semantics_of(fn::Comm_idup).kind, CallKind::none);
  EXPECT_EQ(semantics_of(fn::Ssend).kind, CallKind::send);
  EXPECT_EQ(semantics_of(fn::Iallreduce).kind, CallKind::collective);
  EXPECT_EQ(semantics_of(0).kind, CallKind::none);       // no function has id 0
  EXPECT_EQ(semantics_of(100000).kind, CallKind::none);  // nor an id this build does not know
}

}  // namespace
}  // namespace commgauge::trace
