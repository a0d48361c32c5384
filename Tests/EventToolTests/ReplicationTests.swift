import EventGraph
import EventGraphReplication
import Foundation
import NATSClient
import TestSupport
import Testing

@Suite("Replication to a JetStream cluster", .serialized)
final class ReplicationTests {
  let cluster: NATSCluster
  let dir: String

  init() throws {
    cluster = try NATSCluster()
    dir = temporaryDirectory("replication")
  }

  deinit { removeDirectory(dir) }

  func model() throws -> Model {
    try Model(
      name: "Notes", version: 1,
      entities: [EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)])])
  }

  /// Every commit record of `store`'s version `version`, in order.
  func records(_ store: EventStore, version: Int? = nil) throws -> [[UInt8]] {
    var all: [[UInt8]] = []
    var next: UInt64 = 1
    while case let batch = try store.commitRecords(from: next, version: version), !batch.isEmpty {
      all += batch.map(\.bytes)
      next = batch[batch.count - 1].number + 1
    }
    return all
  }

  @Test("a replica made from the stream holds the primary's log byte for byte, verifies, and refuses writes")
  func shipAndFollow() throws {
    let primary = try EventStore.create(at: dir + "/p", model: model())
    for i in 0..<30 { try primary.write { tx in _ = try tx.insert("Note", ["text": .string("note \(i)")]) } }
    let shipper = try Shipper(store: primary, jetStream: try cluster.jetStream(), stream: "SHIP")
    try shipper.shipPending()
    #expect(shipper.status.shipped[1] == 30)
    let replica = try Replica.create(at: dir + "/r", jetStream: try cluster.jetStream(), stream: "SHIP")
    try replica.catchUp()
    #expect(try records(replica.store) == records(primary))
    #expect(try replica.store.verify().isOK)
    #expect(replica.store.storeID == primary.storeID)
    // More commits reach a replica that catches up again.
    for i in 30..<45 { try primary.write { tx in _ = try tx.insert("Note", ["text": .string("note \(i)")]) } }
    try shipper.shipPending()
    try replica.catchUp()
    #expect(try records(replica.store) == records(primary))
    #expect(try replica.store.read { try $0.objects(of: "Note").count } == 45)
    let refused = #expect(throws: StoreError.self) {
      try replica.store.write { tx in _ = try tx.insert("Note", ["text": .string("local")]) }
    }
    #expect(refused?.code == .replica)
  }

  @Test("quorum mode: 64 concurrent commits each return once the stream holds them")
  func quorumCommits() async throws {
    let primary = try EventStore.create(at: dir + "/q", model: model())
    let shipper = try Shipper(store: primary, jetStream: try cluster.jetStream(), stream: "QUORUM", mode: .quorum)
    shipper.start()
    defer { shipper.stop() }
    let numbers = try await withThrowingTaskGroup(of: UInt64.self) { group in
      for i in 0..<64 {
        group.addTask {
          let result = try await primary.commit { tx in _ = try tx.insert("Note", ["text": .string("n\(i)")]) }
          // Acknowledged: the stream has it now, whatever the shipper does next.
          return result.commit?.number ?? 0
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(Set(numbers) == Set(1...64))
    #expect((shipper.status.shipped[1] ?? 0) >= 64)
    let replica = try Replica.create(at: dir + "/qr", jetStream: try cluster.jetStream(), stream: "QUORUM")
    try replica.catchUp()
    #expect(try records(replica.store) == records(primary))
  }

  @Test(
    "a promoted replica fences the former primary: its publish is refused, its commits fail, its store refuses writes")
  func promotionFences() async throws {
    let primary = try EventStore.create(at: dir + "/f", model: model())
    let shipper = try Shipper(store: primary, jetStream: try cluster.jetStream(), stream: "FENCE", mode: .quorum)
    shipper.start()
    for i in 0..<5 { try await primary.commit { tx in _ = try tx.insert("Note", ["text": .string("a\(i)")]) } }
    let replica = try Replica.create(at: dir + "/fr", jetStream: try cluster.jetStream(), stream: "FENCE")
    try replica.promote()
    #expect(try replica.store.replicationRole()?.kind == .primary)
    #expect(try replica.store.read { try $0.objects(of: "Note").count } == 5)
    // The former primary's next commit lands locally but is never acknowledged.
    await #expect(throws: ReplicationError.self) {
      try await primary.commit { tx in _ = try tx.insert("Note", ["text": .string("late")]) }
    }
    #expect(shipper.status.fenced != nil)
    shipper.stop()
    #expect(try primary.replicationRole()?.kind == .fenced)
    let refused = #expect(throws: StoreError.self) {
      try primary.write { tx in _ = try tx.insert("Note", ["text": .string("after")]) }
    }
    #expect(refused?.code == .fenced)
    // The new primary ships its own commits after the promote message.
    try replica.store.write { tx in _ = try tx.insert("Note", ["text": .string("new primary")]) }
    let next = try Shipper(store: replica.store, jetStream: try cluster.jetStream(), stream: "FENCE")
    try next.shipPending()
    let second = try Replica.create(at: dir + "/fr2", jetStream: try cluster.jetStream(), stream: "FENCE")
    try second.catchUp()
    #expect(try records(second.store) == records(replica.store))
    #expect(try second.store.read { try $0.objects(of: "Note").count } == 6)
  }

  @Test(
    "a former primary whose next commit has the number the new primary's first commit took is fenced, never told the stream holds it"
  )
  func sameNumberAfterPromotion() async throws {
    let primary = try EventStore.create(at: dir + "/n", model: model())
    let shipper = try Shipper(store: primary, jetStream: try cluster.jetStream(), stream: "SAME", mode: .quorum)
    shipper.start()
    defer { shipper.stop() }
    for i in 0..<5 { try await primary.commit { tx in _ = try tx.insert("Note", ["text": .string("a\(i)")]) } }
    let replica = try Replica.create(at: dir + "/nr", jetStream: try cluster.jetStream(), stream: "SAME")
    try replica.promote()
    // The new primary's commit 6 reaches the stream first; the former primary's commit 6,
    // made while it did not know, must meet the fence, not the new one's acknowledgement.
    try replica.store.write { tx in _ = try tx.insert("Note", ["text": .string("new primary")]) }
    try Shipper(store: replica.store, jetStream: try cluster.jetStream(), stream: "SAME").shipPending()
    await #expect(throws: ReplicationError.self) {
      try await primary.commit { tx in _ = try tx.insert("Note", ["text": .string("former primary")]) }
    }
    #expect(shipper.status.fenced != nil)
    #expect(try primary.replicationRole()?.kind == .fenced)
    // Its commit 6 is not the stream's commit 6: it is unshipped, whatever the numbers say.
    #expect(try ReplicationStatus.read(primary, jetStream: try cluster.jetStream())?.unshippedCommits == 1)
    #expect(try ReplicationStatus.read(replica.store, jetStream: try cluster.jetStream())?.unshippedCommits == 0)
    let check = try Replica.create(at: dir + "/nc", jetStream: try cluster.jetStream(), stream: "SAME")
    try check.catchUp()
    let texts = try check.store.read { s in
      try s.objects(of: "Note").compactMap { try s.value($0, "text")?.stringValue }
    }
    #expect(texts.sorted() == ["a0", "a1", "a2", "a3", "a4", "new primary"])
  }

  @Test("a restarted shipper resumes where the stream ends, with no commit twice")
  func shipperResumes() throws {
    let primary = try EventStore.create(at: dir + "/s", model: model())
    var generator = SeededGenerator(seed: 0x5EED)
    for round in 0..<6 {
      for i in 0..<Int(1 + generator.next() % 20) {
        try primary.write { tx in _ = try tx.insert("Note", ["text": .string("r\(round) \(i)")]) }
      }
      try Shipper(store: primary, jetStream: try cluster.jetStream(), stream: "RESUME").shipPending()
    }
    let replica = try Replica.create(at: dir + "/sr", jetStream: try cluster.jetStream(), stream: "RESUME")
    try replica.catchUp()
    #expect(try records(replica.store) == records(primary))
  }

  @Test("bad input: another store's stream, a record whose checksum fails, a gap, promote of a primary")
  func badInput() throws {
    let a = try EventStore.create(at: dir + "/a", model: model())
    try a.write { tx in _ = try tx.insert("Note", ["text": .string("a")]) }
    try Shipper(store: a, jetStream: try cluster.jetStream(), stream: "OWNED").shipPending()
    let b = try EventStore.create(at: dir + "/b", model: model())
    let other = #expect(throws: ReplicationError.self) {
      try Shipper(store: b, jetStream: try cluster.jetStream(), stream: "OWNED")
    }
    #expect(other?.code == .otherStore)
    #expect(try b.replicationRole() == nil)

    // A stream whose commits message carries a damaged record.
    let js = try cluster.jetStream()
    let c = try EventStore.create(at: dir + "/c", model: model())
    try c.write { tx in _ = try tx.insert("Note", ["text": .string("c")]) }
    try Shipper(store: c, jetStream: js, stream: "DAMAGED").shipPending()
    var bytes = try c.commitRecords(from: 1)[0].bytes
    bytes[bytes.count / 2] ^= 0x40
    let framed = [UInt8(0), 0, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes
    let last = try js.streamInfo("DAMAGED")?.lastSequence ?? 0
    _ = try js.publish(
      OutgoingMessage(
        subject: "eg.DAMAGED.v1.commits", id: "damaged",
        headers: ["EG-Kind": "commits", "EG-Store": c.storeID, "EG-Member": "test", "EG-Version": "1"], data: framed),
      expectLastSequence: last)
    let replica = try Replica.create(at: dir + "/cr", jetStream: js, stream: "DAMAGED")
    let damaged = #expect(throws: ReplicationError.self) { try replica.catchUp() }
    #expect(damaged?.code == .badMessage)
    #expect(damaged?.sequence == last + 1)
    // Everything before the damaged message was applied, nothing of it.
    #expect(try replica.position() == last)
    #expect(try replica.store.verify().isOK)

    let promoteRefused = #expect(throws: ReplicationError.self) {
      try Replica(store: a, jetStream: js, stream: "OWNED")
    }
    #expect(promoteRefused?.code == .wrongRole)
    #expect(throws: NATSError.self) { try NATSConnection(urls: ["nats://127.0.0.1:1"], name: "t", timeout: 0.5) }
  }
}
