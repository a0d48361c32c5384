import EventGraph
import EventGraphReplication
import Foundation
import NATSClient
import TestSupport
import Testing

// A truncation past one machine (Docs/retention.md, "Replicas"): the base travels through
// the stream, replicas fold to it byte for byte, the stream is purged before it.
extension ReplicationTests {
  /// `count` commits on `store`, each inserting a note or editing one of the notes so far.
  func commit(_ count: Int, on store: EventStore, _ generator: inout SeededGenerator, tag: String) throws {
    for i in 0..<count {
      let notes = try store.read { try $0.objects(of: "Note") }
      let edit = !notes.isEmpty && generator.next() % 3 == 0
      let target = edit ? notes[Int(generator.next() % UInt64(notes.count))] : nil
      let stamp = generator.next()
      try store.write { tx in
        if let target {
          try tx.set(target, "text", .string("\(tag) edit \(i) \(stamp)"))
        } else {
          _ = try tx.insert("Note", ["text": .string("\(tag) \(i)")])
        }
      }
    }
  }

  /// A primary at `name` in the test's directory with its shipper to `stream`, after `rounds`
  /// shipments of `each` commits.
  func shippingPrimary(
    _ name: String, stream: String, rounds: Int, each: Int, _ generator: inout SeededGenerator, js: JetStream
  ) throws -> (EventStore, Shipper) {
    let primary = try EventStore.create(at: dir + "/" + name, model: model())
    let shipper = try Shipper(store: primary, jetStream: js, stream: stream)
    for _ in 0..<rounds {
      try commit(each, on: primary, &generator, tag: name)
      try shipper.shipPending()
    }
    return (primary, shipper)
  }

  /// Every replica's log equals the primary's byte for byte, and each verifies.
  func expectSame(_ replicas: [Replica], as primary: EventStore) throws {
    let expected = try records(primary)
    for r in replicas {
      #expect(try records(r.store) == expected, "\(r.store.path)")
      #expect(try r.store.verify().isOK, "\(r.store.path)")
    }
  }

  @Test(
    "a truncation travels as a base: replicas fold to the primary's bytes, one left behind by the purge takes the base, the stream shrinks, a replica made afterwards starts from the base"
  )
  func truncationTravels() throws {
    let js = try cluster.jetStream()
    var generator = SeededGenerator(seed: 0xBA5E)
    let (primary, shipper) = try shippingPrimary("p", stream: "TRUNC", rounds: 4, each: 5, &generator, js: js)
    let current = try Replica.create(at: dir + "/current", jetStream: js, stream: "TRUNC")
    let behind = try Replica.create(at: dir + "/behind", jetStream: js, stream: "TRUNC")
    try current.catchUp()
    try behind.catchUp()
    for _ in 0..<4 {
      try commit(5, on: primary, &generator, tag: "b")
      try shipper.shipPending()
    }
    try current.catchUp()
    let before = try #require(try js.streamInfo("TRUNC")).messages

    // Truncated with commits after the cut already in the stream; more commits, then a
    // shipper started anew (it finds the stream's commits before the base gone from the log).
    let report = try primary.truncate(.keepCommits(10))
    #expect(report.commits == 30, "40 commits, the last 10 kept")
    try commit(5, on: primary, &generator, tag: "c")
    let restarted = try Shipper(store: primary, jetStream: js, stream: "TRUNC")
    try restarted.shipPending()
    #expect(restarted.status.lastError == nil)
    let after = try #require(try js.streamInfo("TRUNC")).messages
    #expect(after < before, "the stream held \(before) messages before the base and \(after) after")

    // `current` holds every commit the base stands for and folds; `behind` lost its next
    // messages to the purge and takes the base; `fresh` starts from it.
    try current.catchUp()
    try behind.catchUp()
    let fresh = try Replica.create(at: dir + "/fresh", jetStream: js, stream: "TRUNC")
    try fresh.catchUp()
    try expectSame([current, behind, fresh], as: primary)
    #expect(try records(fresh.store).first.map { try CommitRecord(bytes: $0).isBase } == true)

    // A second truncation, with the shipper that runs on.
    try primary.truncate(.keepCommits(3))
    try commit(4, on: primary, &generator, tag: "d")
    try restarted.shipPending()
    for r in [current, behind, fresh] { try r.catchUp() }
    try expectSame([current, behind, fresh], as: primary)
    #expect(
      try primary.read { try $0.objects(of: "Note").count } == fresh.store.read { try $0.objects(of: "Note").count })
  }

  @Test("a running shipper adds its check to the store's health: healthy while it ships, gone once stopped")
  func shipperHealth() throws {
    let js = try cluster.jetStream()
    let store = try EventStore.create(at: dir + "/h", model: model())
    try store.write { tx in _ = try tx.insert("Note", ["text": .string("one")]) }
    let shipper = try Shipper(store: store, jetStream: js, stream: "HEALTH")
    #expect(try !store.health().checks.contains { $0.name.hasPrefix("shipper:") })
    shipper.start()
    #expect(waitUntil(seconds: 60) { shipper.status.shipped[1] == 1 })
    let check = try #require(try store.health().checks.first { $0.name == "shipper:HEALTH" })
    #expect(check.isHealthy && check.detail.hasPrefix("0 commits not yet shipped"), "\(check)")
    shipper.stop()
    #expect(try !store.health().checks.contains { $0.name.hasPrefix("shipper:") })
  }

  @Test("a gap the stream has not purged before a base is refused; a base that does not fold is refused, unapplied")
  func baseBadInput() throws {
    let js = try cluster.jetStream()
    var generator = SeededGenerator(seed: 0x6A9)
    _ = try shippingPrimary("g", stream: "GAP", rounds: 3, each: 3, &generator, js: js)
    // Commit messages removed without a base after them: a gap, not a purge.
    try js.purge("GAP", subject: "eg.GAP.v1.commits", before: 4)
    let replica = try Replica.create(at: dir + "/gr", jetStream: js, stream: "GAP")
    let gap = #expect(throws: ReplicationError.self) { try replica.catchUp() }
    #expect(gap?.code == .badMessage)
    #expect(gap?.description.contains("gap") == true)

    // A replica whose log differs from the primary's before the cut does not fold to the
    // primary's base: refused, and its log stays as it was.
    let other = try EventStore.create(at: dir + "/o", model: model())
    try commit(8, on: other, &generator, tag: "o")
    let copy = try EventStore.create(at: dir + "/oc", model: model())
    try copy.appendCommitRecords(other.commitRecords(from: 1))
    try copy.write { tx in _ = try tx.insert("Note", ["text": .string("not the primary's")]) }
    try commit(2, on: other, &generator, tag: "o")
    try other.truncate(.keepCommits(1))
    let base = try #require(try other.commitRecords(from: 1, maxCommits: 1).first)
    let kept = try records(copy)
    let refused = #expect(throws: StoreError.self) { try copy.applyBase(base) }
    #expect(refused?.code == .corrupt)
    #expect(try records(copy) == kept)
    let notBase = try #require(try copy.commitRecords(from: 1, maxCommits: 1).first)
    #expect(throws: StoreError.self) { try copy.applyBase(notBase) }
  }
}
