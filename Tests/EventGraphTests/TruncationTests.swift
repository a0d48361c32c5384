import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("Truncation: the commits before a cut folded into a base")
struct TruncationTests {
  /// What a truncation must keep of a store: the export, every live object's version and
  /// relationships in order.
  struct Kept: Equatable {
    var export: [String] = []
    var versions: [ObjectID: UInt64] = [:]
    var relationships: [ObjectID: [PropertyID: [ObjectID]]] = [:]

    init(_ store: EventStore) throws {
      try store.export { export.append($0) }
      try store.read { s in
        for e in store.model.entities {
          for o in try s.objects(of: e.name) {
            versions[o] = try s.version(of: o)
            for r in e.relationships { relationships[o, default: [:]][r.id] = try s.related(o, r.name) }
          }
        }
      }
    }
  }

  /// The first sequences of the log's commits (the base's among them).
  static func commitStarts(_ store: EventStore) throws -> [UInt64] {
    try store.commitRecords(from: 1, maxCommits: 100_000).map(\.firstSequence)
  }

  /// The records from commit `number` on, byte for byte.
  static func records(_ store: EventStore, from number: UInt64) throws -> [[UInt8]] {
    try store.commitRecords(from: number, maxCommits: 100_000, maxBytes: .max).map(\.bytes)
  }

  @Test(
    "for random histories and any cut, the truncated store keeps the state, versions and order, every later commit byte for byte, and verifies",
    arguments: (1...UInt64(6 * stressFactor)).map { $0 })
  func truncationKeepsWhatFollows(seed: UInt64) throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    try ReplayTests.randomHistory(store, seed: seed, commits: 60)
    var g = SeededGenerator(seed: seed &* 31)
    let twin = dir + "/twin"
    try store.copy(to: twin)
    // Two cuts, the second after the first, so that a base is folded into a later one.
    var lastCut: UInt64 = 1
    for round in 0..<2 {
      let starts = try Self.commitStarts(store)
      let end = try store.lastSequence()
      // A cut at the base's own (the first commit's start, or the log's end after a cut
      // there) has nothing to fold.
      let candidates = (Array(starts.dropFirst()) + [end + 1]).filter { $0 > lastCut }
      guard !candidates.isEmpty else { break }
      let cut = g.pick(candidates)
      lastCut = cut
      let before = try Kept(store)
      let pastCut =
        try store.commitRecords(from: 1, maxCommits: 100_000, maxBytes: .max)
        .first { $0.firstSequence == cut }?.number ?? 0
      let later = pastCut == 0 ? [] : try Self.records(store, from: pastCut)
      let asOfCut: [ObjectID: ObjectVersion?] = try store.read { s in
        var r: [ObjectID: ObjectVersion?] = [:]
        for o in before.versions.keys { r[o] = try s.object(o, asOf: cut - 1) }
        return r
      }
      let report = try store.truncate(.before(sequence: cut))
      #expect(report.cut == cut, "round \(round)")
      #expect(!report.isEmpty)
      #expect(try Kept(store) == before, "seed \(seed) round \(round): cut at \(cut)")
      if pastCut > 0 { #expect(try Self.records(store, from: pastCut) == later) }
      let verified = try store.verify()
      #expect(verified.isOK, "seed \(seed) round \(round): \(verified.problems)")
      // The state at the cut is kept; the states before it are gone.
      try store.read { s in
        for (o, v) in asOfCut {
          let read = try s.object(o, asOf: cut - 1)
          #expect(read == v, "\(o) as of \(cut - 1)")
        }
        if cut >= 3 {
          #expect(throws: StoreError.self) { try s.object(ObjectID(1), asOf: cut - 2) }
        }
      }
    }
    // What the store does next does not tell the truncated one from the whole one.
    let whole = try EventStore(path: twin)
    try ReplayTests.randomHistory(store, seed: seed + 1000, commits: 30)
    try ReplayTests.randomHistory(whole, seed: seed + 1000, commits: 30)
    #expect(try Kept(store) == Kept(whole), "seed \(seed): the commits after truncation")
    #expect(try store.verify().isOK)
  }

  @Test("a dry run reports what a truncation then does, and writes nothing")
  func dryRun() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    try ReplayTests.randomHistory(store, seed: 7, commits: 40)
    let before = try Self.records(store, from: 1)
    let planned = try store.truncate(.keepCommits(10), dryRun: true)
    #expect(planned.dryRun && !planned.isEmpty)
    #expect(try Self.records(store, from: 1) == before)
    let done = try store.truncate(.keepCommits(10))
    var comparable = planned
    comparable.dryRun = false
    comparable.seconds = done.seconds
    #expect(comparable == done)
    #expect(done.historyEntries > 0 && done.bytesFreed > 0)
    // The base and the ten commits after it.
    #expect(try store.commitRecords(from: 1, maxCommits: 100).count == 11)
  }

  @Test("every commit folded: the base alone holds the graph, and commits go on after it")
  func everything() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    try ReplayTests.randomHistory(store, seed: 11, commits: 30)
    let before = try Kept(store)
    let end = try store.read { try $0.logEnd() }
    let report = try store.truncate(.keepCommits(0))
    #expect(report.cut == end.sequence + 1)
    #expect(try Kept(store) == before)
    let records = try store.commitRecords(from: 1)
    #expect(records.count == 1 && records[0].number == end.commit && records[0].lastSequence == end.sequence)
    let next = try store.write { tx in _ = try tx.insert("Company", ["name": .string("after")]) }
    #expect(next.commit?.number == end.commit + 1 && next.commit?.firstSequence == end.sequence + 1)
    #expect(try store.verify().isOK)
    // Keeping the one commit after the base folds nothing; keeping none folds both.
    #expect(try store.truncate(.keepCommits(1)).isEmpty)
    #expect(try store.truncate(.keepCommits(0)).commits == 2)
    #expect(try store.truncate(.keepCommits(0)).isEmpty)
    #expect(try Kept(store).export.count == before.export.count + 1)
    #expect(try store.verify().isOK)
  }

  @Test("refusals name the store and the cut, and write nothing")
  func refusals() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    try ReplayTests.randomHistory(store, seed: 3, commits: 20)
    let starts = try Self.commitStarts(store)
    let end = try store.lastSequence()
    let inside = try #require(zip(starts, starts.dropFirst()).first { $1 - $0 > 1 }).0 + 1
    func refusal(_ cut: TruncationCut) -> StoreError? {
      do {
        try store.truncate(cut)
        return nil
      } catch let e as StoreError { return e } catch { return nil }
    }
    let before = try Self.records(store, from: 1)
    for (cut, words) in [
      (TruncationCut.before(sequence: 0), "sequences start at 1"),
      (.before(sequence: end + 2), "beyond the end of the log (the last sequence is \(end))"),
      (.before(sequence: inside), "inside commit"),
      (.keepCommits(-1), "0 or more"),
      (.olderThan(seconds: -5), "not one"),
      (.olderThan(seconds: .nan), "not one"),
    ] {
      let e = try #require(refusal(cut), "\(cut)")
      #expect(e.code == .invalidTruncation)
      #expect(e.description.contains(store.path) && e.description.contains(words), "\(e.description)")
    }
    #expect(try Self.records(store, from: 1) == before)
    try store.truncate(.before(sequence: starts[5]))
    let e = try #require(refusal(.before(sequence: starts[3])))
    #expect(e.description.contains("before sequence \(starts[3])") && e.description.contains("was truncated on"))
    // Nothing to fold is no error: the base's own cut, a policy that keeps everything.
    #expect(try store.truncate(.before(sequence: starts[5])).isEmpty)
    #expect(try store.truncate(.keepCommits(1000)).isEmpty)
    #expect(try store.truncate(.olderThan(seconds: 3600)).isEmpty)
    // By age, measured from `now`: an hour on, every commit after the base is older.
    let logEnd = try store.lastSequence()
    let aged = try store.truncate(.olderThan(seconds: 60), now: Date().addingTimeInterval(3_600))
    #expect(aged.cut == logEnd + 1 && aged.commits > 1, "\(aged)")
    #expect(try store.verify().isOK)
  }

  @Test("reads before the base are refused with historyTruncated; the state at the cut and after is read")
  func readsBeforeTheBase() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    var company = ObjectID(0)
    for i in 0..<5 {
      try store.write { tx in
        if i == 0 { company = try tx.insert("Company", ["name": .string("c0")]) }
        try tx.set(company, "name", .string("c\(i)"))
      }
    }
    let starts = try Self.commitStarts(store)
    try store.truncate(.before(sequence: starts[3]))
    try store.read { s in
      let cut = starts[3]
      let atCut = try s.object(company, asOf: cut - 1)
      #expect(atCut?.state[PropertyID(rawValue: 0)] == .string("c2"))
      for read in [
        { _ = try s.object(company, asOf: cut - 2) }, { _ = try s.commitEnd(at: 1) },
        { _ = try s.lastSequence(ofCommit: 2) },
      ] as [() throws -> Void] {
        let e = #expect(throws: StoreError.self) { try read() }
        #expect(e?.code == .historyTruncated)
        #expect(
          e?.description.contains("history before sequence \(cut - 1) was truncated on") == true,
          "\(e?.description ?? "")")
      }
      #expect(try s.lastSequence(ofCommit: 3) == cut - 1)
    }
    #expect(throws: StoreError.self) { try store.export(asOf: 1) { _ in } }
    #expect(throws: StoreError.self) { try store.commitRecords(from: 2) }
    #expect(try store.commitRecords(from: 1).first?.number == 3)
  }

  @Test("a follower before the base is refused unless it asks to start from the base")
  func followersBeforeTheBase() async throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    for i in 0..<4 { try store.write { tx in _ = try tx.insert("Company", ["name": .string("c\(i)")]) } }
    try store.truncate(.keepCommits(1))
    var strict = store.events(after: 0).makeAsyncIterator()
    let e = await #expect(throws: StoreError.self) { _ = try await strict.next() }
    #expect(e?.code == .historyTruncated)
    var lenient = store.events(after: 0, fromBase: true).makeAsyncIterator()
    let base = try #require(try await lenient.next())
    #expect(base.metadata.base != nil && base.number == 3)
    #expect(base.events.filter { if case .insert = $0 { true } else { false } }.count == 3)
    let next = try #require(try await lenient.next())
    #expect(next.number == 4 && next.firstSequence == base.lastSequence + 1)
    let consumer = try store.consumer("late", fromBase: true)
    var commits = try consumer.commits().makeAsyncIterator()
    #expect(try await commits.next()?.metadata.base != nil)
    let strictConsumer = try store.consumer("strict")
    var refused = try strictConsumer.commits().makeAsyncIterator()
    await #expect(throws: StoreError.self) { _ = try await refused.next() }
    // A position at the base's end continues as before.
    var after = store.events(after: base.lastSequence).makeAsyncIterator()
    #expect(try await after.next()?.number == 4)
  }

  @Test("after a cut, rebuild, clone, snapshots (with history too), backup and salvage work and verify")
  func everythingElseWorks() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    try ReplayTests.randomHistory(store, seed: 21, commits: 60)
    let starts = try Self.commitStarts(store)
    try store.truncate(.before(sequence: starts[starts.count / 2]))
    let before = try Kept(store)
    try store.rebuild()
    #expect(try Kept(store) == before)
    let company = try #require(try store.read { try $0.objects(of: "Company") }.first)
    let copy = try store.clone(root: company)
    #expect(copy.root != company)
    #expect(try store.verify().isOK)
    for withHistory in [false, true] {
      let out = dir + "/snapshot-\(withHistory)"
      try store.snapshot(to: out, withHistory: withHistory)
      let snap = try EventStore(path: out)
      let report = try snap.verify()
      #expect(report.isOK, "with history: \(withHistory): \(report.problems)")
      #expect(try Kept(snap).export == Kept(store).export, "with history: \(withHistory)")
    }
    let backup = try store.backup(to: dir + "/backup")
    #expect(backup.verification.isOK)
    let salvage = try EventStore.salvage(at: store.path, into: dir + "/salvaged")
    #expect(salvage.isComplete && salvage.commitsLost == 0, "\(salvage)")
    let salvaged = try EventStore(path: dir + "/salvaged")
    #expect(try salvaged.verify().isOK)
    #expect(try Kept(salvaged) == Kept(store))
  }

  @Test("a store opened with a retention schedule applies its policy by itself as commits land")
  func schedule() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    do {
      let store = try EventStore.create(at: path, model: try Fixtures.company())
      try store.setRetentionPolicy(.keepCommits(5))
      #expect(try store.retentionPolicy() == .keepCommits(5))
    }
    let store = try EventStore(path: path, options: StoreOptions(retention: RetentionSchedule(commits: 40)))
    let c = try #require(try store.write { tx in try tx.insert("Company", ["name": .string("c")]) }.value)
    for i in 0..<39 { try store.write { tx in try tx.set(c, "name", .string("c\(i)")) } }
    // A timeout only turns a hang into a failure: the run is on a thread of its own.
    let deadline = Date().addingTimeInterval(120)
    while store.lastRetentionRun == nil && Date() < deadline { usleep(10_000) }
    let run = try #require(store.lastRetentionRun)
    #expect(run.error == nil, "\(run.error ?? "")")
    #expect(run.report?.commits == 35)
    #expect(try store.commitRecords(from: 1).count == 6)
    #expect(try store.verify().isOK)
    #expect(try store.read { try $0.object(c) }?[PropertyID(rawValue: 0)] == .string("c38"))
  }
}
