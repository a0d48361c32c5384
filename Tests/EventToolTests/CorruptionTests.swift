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
    // Damage every copy of commit 6's record the file holds (its tail is unique to it).
    let file = URL(fileURLWithPath: store + "/data.mdb")
    var data = try Data(contentsOf: file)
    let copies = Self.ranges(of: Data(records[5].bytes.suffix(24)), in: data)
    try #require(!copies.isEmpty)
    for copy in copies { data[copy.lowerBound] ^= 0x5A }
    let newest = try Self.zeroNewestMetaPage(&data, store)
    try data.write(to: file)
    let r = try ToolRunner.eventtool(["salvage", store, "--out", dir + "/out", "--json"])
    #expect(r.status == 0, "\(r.err)")
    // Read from the other meta page, one transaction older: its log has 12 of the 13
    // commits, of which the first five are whole; no copy of the sixth is left to carry it on.
    #expect(r.out.contains("\"commits\": 5") && r.out.contains("\"commitsLost\": 7"), "\(r.out)")
    #expect(r.out.contains("\"olderMetaPage\": true") && r.out.contains("\"foundByScan\": 0"))
    // The lost meta page's transaction may have held more: not vouched for.
    #expect(r.out.contains("\"complete\": false") && r.out.contains("\"lossUnknown\": \"meta page \(newest.index)"))
    #expect(r.out.contains("checksum"))
    let copy = try EventStore(path: dir + "/out", options: StoreOptions(readOnly: true))
    #expect(try copy.commitRecords(from: 1, maxCommits: .max) == Array(records.prefix(5)))
    // The damaged store is refused by the read commands, naming the damage.
    let show = try ToolRunner.eventtool(["show", store, "Company/1"])
    #expect(show.status == 1 && show.err.contains("meta page \(newest.index)"))
  }

  @Test(
    "a zeroed newest meta page: the commits of its lost transaction are found by scanning the file, and the loss is not called nothing"
  )
  func salvageLostMetaPage() throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // One commit: the other meta page is from before it, its log empty.
    let store = dir + "/store"
    let created = try EventStore.create(at: store, model: try Model(contentsOf: examples + "/Company.model.json"))
    try created.write { tx in _ = try tx.insert("Company", ["name": .string("Acme")]) }
    let records = try created.commitRecords(from: 1, maxCommits: .max)
    let file = URL(fileURLWithPath: store + "/data.mdb")
    var data = try Data(contentsOf: file)
    let newest = try Self.zeroNewestMetaPage(&data, store)
    try data.write(to: file)
    let r = try ToolRunner.eventtool(["salvage", store, "--out", dir + "/out"])
    #expect(r.status == 0, "\(r.err)")
    #expect(r.out.contains("salvaged 1 commits"), "\(r.out)")
    #expect(r.out.contains("found by scanning the file: the last 1 of those commits"))
    let last = records[0].lastSequence
    #expect(r.out.contains("lost: not known after sequence \(last): meta page \(newest.index) is damaged"))
    #expect(!r.out.contains("lost: nothing"))
    let copy = try EventStore(path: dir + "/out", options: StoreOptions(readOnly: true))
    #expect(try copy.commitRecords(from: 1, maxCommits: .max) == records)
    // The same through Swift, on the larger store: all 13 commits, the last from the scan.
    try FileManager.default.createDirectory(atPath: dir + "/big", withIntermediateDirectories: true)
    let big = try Self.makeStore(dir + "/big")
    let all = try EventStore(path: big, options: StoreOptions(readOnly: true)).commitRecords(from: 1, maxCommits: .max)
    var bigData = try Data(contentsOf: URL(fileURLWithPath: big + "/data.mdb"))
    _ = try Self.zeroNewestMetaPage(&bigData, big)
    try bigData.write(to: URL(fileURLWithPath: big + "/data.mdb"))
    let report = try EventStore.salvage(at: big, into: dir + "/big-out")
    #expect(report.commits == all.count && report.foundByScan == 1 && report.commitsLost == 0)
    #expect(report.stoppedBecause == nil && report.lossUnknown != nil && !report.isComplete)
    let bigCopy = try EventStore(path: dir + "/big-out", options: StoreOptions(readOnly: true))
    #expect(try bigCopy.commitRecords(from: 1, maxCommits: .max) == all)
  }

  @Test(
    "a damaged record of the live log is carried on from an older copy of its page, as far as the newest meta page counts"
  )
  func salvageFromOlderCopy() throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // Small commits, one transaction each: each copies the log's last leaf, leaving the
    // previous version of it on a freed page.
    let store = dir + "/store"
    let created = try EventStore.create(at: store, model: try Model(contentsOf: examples + "/Company.model.json"))
    for i in 0..<30 { try created.write { tx in _ = try tx.insert("Company", ["name": .string("C\(i)")]) } }
    let records = try created.commitRecords(from: 1, maxCommits: .max)
    let original = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
    let copies = Self.ranges(of: Data(records[28].bytes.suffix(12)), in: original)
    try #require(copies.count >= 2, "the file holds \(copies.count) copies of commit 29's record")
    // Whichever copy is damaged (the live tree's among them), every commit is recovered.
    for (n, copy) in copies.enumerated() {
      let damaged = dir + "/damaged-\(n)"
      try FileManager.default.copyItem(atPath: store, toPath: damaged)
      var data = original
      data[copy.lowerBound] ^= 0x5A
      try data.write(to: URL(fileURLWithPath: damaged + "/data.mdb"))
      let report = try EventStore.salvage(at: damaged, into: damaged + ".out")
      #expect(report.commits == 30 && report.isComplete, "copy \(n): \(report)")
      let out = try EventStore(path: damaged + ".out", options: StoreOptions(readOnly: true))
      #expect(try out.commitRecords(from: 1, maxCommits: .max) == records, "copy \(n)")
    }
    // A transaction that wrote its pages but never its meta page: both meta pages intact,
    // from before it. Its record is in the file, but it never committed: not recovered.
    let metaBytes = 2 * (try #require(PageCheck.metaPages(dataFile: store + "/data.mdb").first?.get().pageSize))
    try created.write { tx in _ = try tx.insert("Company", ["name": .string("never committed")]) }
    var data = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
    data.replaceSubrange(0..<metaBytes, with: original.prefix(metaBytes))
    try data.write(to: URL(fileURLWithPath: store + "/data.mdb"))
    let report = try EventStore.salvage(at: store, into: dir + "/uncommitted.out")
    #expect(report.commits == 30 && report.foundByScan == 0 && report.isComplete, "\(report)")
  }

  /// Where `needle` occurs in `data`.
  static func ranges(of needle: Data, in data: Data) -> [Range<Data.Index>] {
    var found: [Range<Data.Index>] = []
    var from = data.startIndex
    while let r = data.range(of: needle, in: from..<data.endIndex) {
      found.append(r)
      from = r.upperBound
    }
    return found
  }

  /// Zeroes the meta page of `store`'s newest transaction in `data` (which of the two it is
  /// depends on how many transactions made the store), returning it.
  static func zeroNewestMetaPage(_ data: inout Data, _ store: String) throws -> MetaPage {
    let metas = try PageCheck.metaPages(dataFile: store + "/data.mdb").compactMap { try? $0.get() }
    let newest = try #require(metas.max { $0.transaction < $1.transaction })
    let page = newest.index * newest.pageSize
    data.replaceSubrange(page..<(page + newest.pageSize), with: Data(repeating: 0, count: newest.pageSize))
    return newest
  }
}
