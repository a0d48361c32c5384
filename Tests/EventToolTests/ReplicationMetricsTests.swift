import Foundation
import TestSupport
import Testing

@testable import EventGraph
@testable import EventGraphReplication

/// The replication statuses as Prometheus families: what `stats --prometheus --nats` and a
/// service serve beside the store's metrics.
@Suite("Replication metrics")
struct ReplicationMetricsTests {
  func promtool(_ text: String) throws -> ProgramResult {
    try runProgram(at: URL(fileURLWithPath: "/usr/bin/promtool"), ["check", "metrics"], input: text)
  }

  @Test("a replica's and a primary's status: promtool accepts them, and the lag is the status's")
  func statuses() throws {
    let replica = ReplicationStatus(
      role: ReplicationRole(.replica, stream: "BOOK \"1\""), streamLastSequence: 120, appliedSequence: 100,
      unshippedCommits: nil, leaseHolder: LeaseHolder(member: "m1", store: "s", address: nil))
    let primary = ReplicationStatus(
      role: ReplicationRole(.primary, stream: "BOOK"), streamLastSequence: 120, appliedSequence: nil,
      unshippedCommits: 3, leaseHolder: nil)
    let r = replica.prometheusText()
    #expect(r.contains("\neventgraph_replication_messages_behind 20\n"))
    #expect(r.contains(#"eventgraph_replication_role{role="replica",stream="BOOK \"1\""} 1"#))
    #expect(r.contains("\neventgraph_replication_lease_held 1\n") && !r.contains("unshipped"))
    let p = primary.prometheusText()
    #expect(p.contains("\neventgraph_replication_unshipped_commits 3\n") && !p.contains("messages_behind"))
    #expect(p.contains("\neventgraph_replication_lease_held 0\n"))
    // With the store's own families, as a service serves them: one exposition, accepted.
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try EventStore.create(
      at: dir + "/s", model: try Model(contentsOf: examples + "/AddressBook.v1.model.json"))
    for text in [r, p, try store.metrics().prometheusText() + p] {
      let checked = try promtool(text)
      #expect(checked.status == 0 && checked.out.isEmpty && checked.err.isEmpty, "\(checked.out)\(checked.err)")
    }
  }

  @Test("a shipper's status: the stream's end, the last commit per version, fenced, retrying, lease lost")
  func shipper() throws {
    let status = ShipperStatus(
      stream: "BOOK", lastSequence: 77, shipped: [2: 40, 1: 12], fenced: nil, lastError: "no leader",
      leaseLostTo: nil)
    let text = status.prometheusText()
    #expect(text.contains(#"eventgraph_shipper_shipped_commit{version="1"} 12"#))
    #expect(text.contains(#"eventgraph_shipper_shipped_commit{version="2"} 40"#))
    #expect(text.contains(#"eventgraph_shipper_stream_last_sequence{stream="BOOK"} 77"#))
    #expect(text.contains("\neventgraph_shipper_retrying 1\n") && text.contains("\neventgraph_shipper_fenced 0\n"))
    let checked = try promtool(text)
    #expect(checked.status == 0 && checked.out.isEmpty && checked.err.isEmpty, "\(checked.out)\(checked.err)")
  }
}
