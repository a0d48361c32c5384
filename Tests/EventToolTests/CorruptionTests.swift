import EventGraph
import Foundation
import LMDB
import TestSupport
import Testing

/// Damaged copies of a store: every read command either answers as on the intact store or
/// refuses with a message, never dies by a signal; `salvage` recovers a verified prefix.
@Suite("Damaged stores: no signal, and salvage recovers what the docs say")
struct CorruptionTests {
  /// A store holding every kind of record: objects, ordered and unordered links, indexes,
  /// history over several commits, an idempotency key, deletes and a checkpoint.
  static func makeStore(_ dir: String) throws -> String {
    let path = dir + "/store"
    let model = try Model(contentsOf: examples + "/Company.model.json")
    let store = try EventStore.create(at: path, model: model)
    var g = SeededGenerator(seed: 77)
    for c in 0..<12 {
      try store.write(metadata: CommitMetadata(idempotencyKey: "batch-\(c)")) { tx in
        let company = try tx.insert("Company", ["name": .string("Company \(c)")])
        for i in 0..<40 {
          let e = try tx.insert("Employee", ["name": .string("Employee \(c)-\(i)-\(g.next() % 1000)")])
          try tx.link(company, "employees", e)
        }
        if c % 3 == 0 { try tx.setCheckpoint(Checkpoint(name: "importer", value: [UInt8(c)])) }
      }
    }
    try store.write { tx in
      for victim in try tx.objects(of: "Employee").prefix(5) { try tx.delete(victim) }
    }
    return path
  }

  /// The read commands, each as arguments after the store.
  static let reads: [[String]] = [
    ["verify"], ["export"], ["log", "--json"], ["stats"], ["show", "Company/1"], ["fetch", "Employee", "--limit", "5"],
  ]

  static func run(_ command: [String], _ store: String) throws -> ToolRunner.Result {
    try ToolRunner.eventtool([command[0], store] + command.dropFirst())
  }

  /// Copies `store` to `copy` and damages the copy's data file by `mode` at a random place.
  static func damage(_ store: String, into copy: String, mode: Int, g: inout SeededGenerator) throws -> String {
    try? FileManager.default.removeItem(atPath: copy)
    try FileManager.default.copyItem(atPath: store, toPath: copy)
    let file = URL(fileURLWithPath: copy + "/data.mdb")
    var data = try Data(contentsOf: file)
    // Damage inside the pages in use: the zeros kept ahead of the data are not the store's.
    let used = min(data.count, try EventStore(path: store, options: StoreOptions(readOnly: true)).statistics().usedSize)
    let at = Int.random(in: 0..<used, using: &g)
    let what: String
    switch mode {
    case 0:
      data[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &g))
      what = "flip at \(at)"
    case 1:
      let n = min(Int.random(in: 1...4096, using: &g), data.count - at)
      data.replaceSubrange(at..<(at + n), with: Data(repeating: 0, count: n))
      what = "zero \(n) at \(at)"
    default:
      data = data.prefix(at)
      what = "truncate to \(at)"
    }
    try data.write(to: file)
    return what
  }

  @Test("flips, zeros and truncations never make a read command die by a signal or answer wrongly with exit 0")
  func damagedCopies() throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try Self.makeStore(dir)
    // The answers of an undamaged copy at the same path (`stats` prints the path).
    let copy = dir + "/copy"
    try FileManager.default.copyItem(atPath: store, toPath: copy)
    let intact = try Self.reads.map { try Self.run($0, copy) }
    #expect(intact.allSatisfy { $0.status == 0 })
    var g = SeededGenerator(seed: 2_026)
    var refused = 0
    for trial in 0..<(12 * stressFactor) {
      let what = try Self.damage(store, into: copy, mode: trial % 3, g: &g)
      for (command, before) in zip(Self.reads, intact) {
        let r = try Self.run(command, copy)
        #expect(r.status >= 0 && r.status <= 2, "\(command[0]) after \(what): status \(r.status)")
        if r.status == 0 {
          // `stats` prints the file's size, which a truncation changes truthfully.
          let keep = { (s: String) in s.split(separator: "\n").filter { !$0.hasPrefix("file ") } }
          #expect(keep(r.out) == keep(before.out), "\(command[0]) after \(what) answered differently with exit 0")
        } else {
          refused += 1
          #expect(!r.err.isEmpty, "\(command[0]) after \(what) failed without a message")
        }
      }
    }
    #expect(refused > 0)
  }

  @Test("salvage of an intact store keeps its identity, model and log, byte for byte")
  func salvageIntact() throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try Self.makeStore(dir)
    let r = try ToolRunner.eventtool(["salvage", store, "--out", dir + "/out", "--json"])
    #expect(r.status == 0, "\(r.err)")
    #expect(r.out.contains("\"commits\": 13") && r.out.contains("\"commitsLost\": 0"))
    #expect(r.out.contains("\"checkpointsLeftBehind\": [\"importer\"]"))
    let original = try EventStore(path: store, options: StoreOptions(readOnly: true))
    let copy = try EventStore(path: dir + "/out", options: StoreOptions(readOnly: true))
    #expect(copy.storeID == original.storeID)
    #expect(try copy.commitRecords(from: 1, maxCommits: .max) == original.commitRecords(from: 1, maxCommits: .max))
    #expect(try copy.verify().isOK)
  }

  @Test(
    "salvage stops at the first damaged record and names what was lost; a zeroed newer meta page is read from the other"
  )
  func salvageDamaged() throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try Self.makeStore(dir)
    let records = try EventStore(path: store, options: StoreOptions(readOnly: true)).commitRecords(
      from: 1, maxCommits: .max)
    // Damage the record of commit 6 where it lies in the file: its bytes are unique there.
    let file = URL(fileURLWithPath: store + "/data.mdb")
    var data = try Data(contentsOf: file)
    let needle = Data(records[5].bytes.suffix(24))
    let at = try #require(data.range(of: needle)).lowerBound
    data[at] ^= 0x5A
    // The newer meta page zeroed (which of the two it is depends on how many transactions
    // made the store).
    let metas = try PageCheck.metaPages(dataFile: store + "/data.mdb").compactMap { try? $0.get() }
    let newest = try #require(metas.max { $0.transaction < $1.transaction })
    let page = newest.index * newest.pageSize
    data.replaceSubrange(page..<(page + newest.pageSize), with: Data(repeating: 0, count: newest.pageSize))
    try data.write(to: file)
    let r = try ToolRunner.eventtool(["salvage", store, "--out", dir + "/out", "--json"])
    #expect(r.status == 0, "\(r.err)")
    // Read from meta page 1, one transaction older: its log has 12 of the 13 commits, of
    // which the first five are whole.
    #expect(r.out.contains("\"commits\": 5") && r.out.contains("\"commitsLost\": 7"), "\(r.out)")
    #expect(r.out.contains("\"olderMetaPage\": true"))
    #expect(r.out.contains("checksum"))
    let copy = try EventStore(path: dir + "/out", options: StoreOptions(readOnly: true))
    #expect(try copy.commitRecords(from: 1, maxCommits: .max) == Array(records.prefix(5)))
    // The damaged store is refused by the read commands, naming the damage.
    let show = try ToolRunner.eventtool(["show", store, "Company/1"])
    #expect(show.status == 1 && show.err.contains("meta page \(newest.index)"))
  }
}
