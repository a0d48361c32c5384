import Foundation
import LMDB
import TestSupport
import Testing

@testable import EventGraph

@Suite("The log interface: records read and appended elsewhere, checkpoints, versions")
struct LogInterfaceTests {
  /// A random history with some idempotency keys, so the dedupe projection is exercised.
  static func history(_ store: EventStore, seed: UInt64) throws {
    try ReplayTests.randomHistory(store, seed: seed, commits: 40)
    for i in 0..<5 {
      try store.write(metadata: CommitMetadata(idempotencyKey: "key-\(seed)-\(i)")) { tx in
        try tx.insert("Company", ["name": .string("keyed \(i)")])
      }
    }
  }

  /// The same entities at another version.
  static func atVersion(_ version: Int, _ model: Model) throws -> Model {
    try Model(name: model.name, version: version, entities: model.descriptions)
  }

  /// `mdb_dump`'s data lines of one database (the header, which names the map size, left out).
  static func dump(_ dir: String, _ db: String) throws -> [Substring] {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/mdb_dump")
    p.arguments = ["-s", db, dir + "/store"]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0, "mdb_dump -s \(db) \(dir)")
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
    return Array(lines.drop { $0 != "HEADER=END" }.dropFirst())
  }

  @Test(
    "records appended to another store, in chunks with a checkpoint, give the same log bytes and projections",
    arguments: stressCases(3))
  func foreignRecordsReproduceTheStore(seed: UInt64) throws {
    let model = try Fixtures.company()
    let (source, sourceDir) = try makeStore(model, label: "source-\(seed)")
    defer { removeDirectory(sourceDir) }
    let (copy, copyDir) = try makeStore(model, label: "copy-\(seed)")
    defer { removeDirectory(copyDir) }
    try Self.history(source, seed: seed)
    var g = SeededGenerator(seed: seed)
    var next: UInt64 = 1
    while true {
      let records = try source.commitRecords(from: next, maxCommits: Int.random(in: 1...7, using: &g))
      guard let last = records.last else { break }
      let infos = try copy.appendCommitRecords(
        records, checkpoint: Checkpoint(name: "source", value: Array(String(last.number).utf8)))
      #expect(infos.map(\.number) == records.map(\.number))
      #expect(infos.map(\.firstSequence) == records.map(\.firstSequence))
      next = last.number + 1
    }
    let end = try source.read { try $0.reader.logEnd() }
    #expect(next == end.commit + 1)
    #expect(try copy.checkpoint(named: "source") == Array(String(end.commit).utf8))
    #expect(try copy.verify().isOK)
    for db in ["log.v1"] + StoreDatabases.projectionNames.map({ "\($0).v1" }) {
      #expect(try Self.dump(copyDir, db) == Self.dump(sourceDir, db), "\(db) differs")
    }
    // The copy takes commits of its own after the appended ones.
    let info = try copy.write { tx in try tx.insert("Company", ["name": .string("own")]) }.commit
    #expect(info?.number == end.commit + 1)
  }

  @Test("reading from every commit number gives the records from there on, in order")
  func readsFromEveryCommitNumber() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    try Self.history(store, seed: 7)
    let all = try store.commitRecords(from: 1, maxCommits: .max)
    let end = try store.read { try $0.reader.logEnd() }
    #expect(all.map(\.number) == Array(1...end.commit))
    for n in 1...end.commit {
      let some = try store.commitRecords(from: n, maxCommits: 3)
      #expect(some == Array(all[Int(n - 1)..<min(all.count, Int(n - 1) + 3)]))
    }
    #expect(try store.commitRecords(from: end.commit + 1).isEmpty)
    #expect(try store.commitRecords(from: 0).isEmpty)
    // A byte limit still yields one record.
    #expect(try store.commitRecords(from: 1, maxBytes: 1).count == 1)
    // Decoded records are the commits of the log.
    let commits = try store.read { try $0.reader.commits(after: 0, maxCommits: .max) }
    #expect(try all.map { try $0.decoded() } == commits)
  }

  @Test("a record out of place, of another version or damaged is refused, and nothing of its batch lands")
  func badRecordsAreRefused() throws {
    let model = try Fixtures.company()
    let (source, sourceDir) = try makeStore(model, label: "source")
    defer { removeDirectory(sourceDir) }
    let (copy, copyDir) = try makeStore(model, label: "copy")
    defer { removeDirectory(copyDir) }
    try Self.history(source, seed: 3)
    let records = try source.commitRecords(from: 1, maxCommits: 6)
    try copy.appendCommitRecords(Array(records[0..<2]))
    let before = try Self.dump(copyDir, "log.v1")
    // A gap, a repeat, and a good record followed by a gap in one call.
    for bad in [[records[3]], [records[1]], [records[2], records[4]]] {
      #expect(throws: StoreError.self) {
        try copy.appendCommitRecords(bad, checkpoint: Checkpoint(name: "c", value: [1]))
      }
    }
    #expect(try Self.dump(copyDir, "log.v1") == before)
    #expect(try copy.checkpoint(named: "c") == nil)
    // One flipped byte fails the checksum.
    var damaged = records[2].bytes
    damaged[damaged.count / 2] ^= 0x40
    #expect(throws: CorruptionError.self) { try CommitRecord(bytes: damaged) }
    // A record of another model version.
    let (other, otherDir) = try makeStore(try Self.atVersion(2, model), label: "other")
    defer { removeDirectory(otherDir) }
    try other.write { tx in try tx.insert("Company", ["name": .string("v2")]) }
    let foreign = try other.commitRecords(from: 1)
    #expect(throws: StoreError.self) { try copy.appendCommitRecords(foreign) }
    #expect(try Self.dump(copyDir, "log.v1") == before)
  }

  @Test("a checkpoint set in a commit lands with it, and not at all when the commit is refused")
  func checkpointsLandWithTheirCommit() async throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    struct Refused: Error {}
    #expect(throws: Refused.self) {
      try store.write { tx in
        try tx.setCheckpoint(Checkpoint(name: "pos", value: [9]))
        throw Refused()
      }
    }
    #expect(try store.checkpoint(named: "pos") == nil)
    // Through the service: a refusal after the checkpoint was written reruns the batch
    // nested, and the checkpoint goes with the refused commit.
    await #expect(throws: Refused.self) {
      try await store.commit { tx in
        try tx.setCheckpoint(Checkpoint(name: "pos", value: [8]))
        throw Refused()
      }
    }
    #expect(try store.checkpoint(named: "pos") == nil)
    try await store.commit { tx in
      try tx.insert("Company", ["name": .string("a")])
      try tx.setCheckpoint(Checkpoint(name: "pos", value: [1]))
      #expect(try tx.checkpoint(named: "pos") == [1])
    }
    #expect(try store.checkpoint(named: "pos") == [1])
    try store.setCheckpoint(Checkpoint(name: "pos", value: [2]))
    #expect(try store.checkpoint(named: "pos") == [2])
    #expect(throws: StoreError.invalidCheckpointName("", maxLength: 200)) { try store.checkpoint(named: "") }
    let long = String(repeating: "é", count: 101)
    #expect(throws: StoreError.invalidCheckpointName(long, maxLength: 200)) { try store.checkpoint(named: long) }
  }

  @Test("versions are installed, switched to and dropped atomically, and refused when they make no sense")
  func versions() throws {
    let model = try Fixtures.company()
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    try store.write { tx in try tx.insert("Company", ["name": .string("one")]) }
    let model2 = try Self.atVersion(2, model)
    try store.installVersion(model2)
    #expect(try store.versions() == [1, 2])
    #expect(throws: StoreError.versionExists(2)) { try store.installVersion(model2) }
    #expect(throws: StoreError.unknownModelVersion(3)) { try store.switchVersion(to: 3) }
    #expect(throws: StoreError.versionInUse(1, reason: "it is the active version")) { try store.dropVersion(1) }
    // A version that is not active drops, and installs again.
    try store.dropVersion(2)
    #expect(try store.versions() == [1])
    #expect(throws: StoreError.self) { try store.switchVersion(to: 2) }
    try store.installVersion(model2)
    try store.switchVersion(to: 2)
    // This handle was opened at version 1: its writes are refused from now on, and it may
    // not drop the version its databases belong to.
    #expect(throws: StoreError.self) { try store.write { tx in try tx.insert("Company", ["name": .string("x")]) } }
    #expect(throws: StoreError.self) { try store.dropVersion(1) }
  }

  @Test("a store switched to another version opens at it and drops the old one")
  func dropAfterSwitch() throws {
    let model = try Fixtures.company()
    let dir = temporaryDirectory("dropAfterSwitch")
    defer { removeDirectory(dir) }
    do {
      let store = try EventStore.create(at: dir + "/store", model: model)
      try store.write { tx in try tx.insert("Company", ["name": .string("one")]) }
      try store.installVersion(try Self.atVersion(2, model), activate: true)
    }
    let store = try EventStore(path: dir + "/store")
    #expect(store.model.version == 2)
    #expect(try store.read { try $0.objects(of: "Company") }.isEmpty)
    try store.write { tx in try tx.insert("Company", ["name": .string("two")]) }
    #expect(throws: StoreError.self) { try store.dropVersion(2) }
    try store.dropVersion(1)
    #expect(try store.versions() == [2])
    #expect(throws: StoreError.self) { try store.switchVersion(to: 1) }
    #expect(try store.verify().isOK)
  }
}

@Suite("Store format 1: upgraded when first opened for writing")
struct FormatUpgradeTests {
  @Test("a format-1 store (no checksums) is refused read-only and upgraded by a writable open, every version")
  func upgrade() throws {
    let model = try Fixtures.company()
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    let exported: [String]
    do {
      let store = try EventStore.create(at: path, model: model)
      try ReplayTests.randomHistory(store, seed: 9, commits: 30)
      try store.installVersion(try LogInterfaceTests.atVersion(2, model))
      exported = try Self.export(store)
    }
    // Make it what format 1 wrote: projection entries without their four checksum bytes.
    do {
      let env = try Environment(path: path, options: EnvironmentOptions(mapSize: 256 << 20, maxDatabases: 64))
      let meta = try #require(try env.openDatabase("meta", create: false))
      for version in [1, 2] {
        for name in StoreDatabases.projectionNames {
          let db = try #require(try env.openDatabase(StoreDatabases.name(name, version: version), create: false))
          let entries = try env.read { txn in
            var all: [([UInt8], [UInt8])] = []
            try txn.forEach(db) { k, v in
              all.append(([UInt8](k), [UInt8](v)))
              return true
            }
            return all
          }
          try env.write { txn in
            for (k, v) in entries { _ = try txn.put(db, key: k, value: Array(v.dropLast(4))) }
          }
        }
      }
      try env.write { txn in _ = try txn.put(meta, key: "format", value: "1") }
    }
    #expect(throws: StoreError.olderFormat(path: path, found: 1)) {
      _ = try EventStore(path: path, options: StoreOptions(readOnly: true))
    }
    do {
      let store = try EventStore(path: path)
      #expect(try store.verify().isOK)
      #expect(try Self.export(store) == exported)
    }
    let reopened = try EventStore(path: path, options: StoreOptions(readOnly: true, checkPages: true))
    #expect(try reopened.verify().isOK)
  }

  /// Every object as JSON Lines.
  static func export(_ store: EventStore) throws -> [String] {
    var lines: [String] = []
    for e in store.model.entities { try store.export(entity: e.name) { lines.append($0) } }
    return lines
  }
}
