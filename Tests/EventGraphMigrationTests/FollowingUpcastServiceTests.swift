import EventGraph
import EventGraphLocking
import Foundation
import Testing

@testable import EventGraphMigration

@Suite("A following upcast as a service sees it")
struct FollowingUpcastServiceTests {
  /// Runs a following upcast of `store` on a thread of its own (it blocks; the tasks'
  /// pool may have two threads) until `control` switches or stops it.
  static func follow(_ store: EventStore, _ control: FollowControl) -> Task<UpcastReport, any Error> {
    Task {
      try await withCheckedThrowingContinuation { c in
        Thread {
          c.resume(
            with: Result {
              try store.followingUpcast(
                through: [try Examples.v2()], mappings: [try Examples.mapping()], batchEvents: 7, control: control)
            })
        }.start()
      }
    }
  }

  @Test(
    "callers' commits after the switch are refused until they move to the new version; a subscriber gets the old log, a switch notice and the new log from the corresponding position"
  )
  func serviceSeesTheSwitch() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    _ = try seedStore(dir + "/s")
    let store = try EventStore(path: dir + "/s")
    let entries = Entries()
    let subscriber = Task {
      for try await entry in store.followLog(after: 0) {
        entries.append(entry)
      }
    }
    let switchNow = Recorder()
    let follower = Self.follow(store, FollowControl(switchNow: { !switchNow.all.isEmpty }))
    for i in 0..<20 {
      try await store.commit { tx in
        try tx.insert("AddressBook", ["firstName": .string("p\(i)"), "lastName": .string("x"), "phone1": .string("1")])
      }
    }
    // A reader of the new version while it is built.
    try await waitUntil { (try? store.read(version: 2) { try $0.commits().count }) == 23 }
    #expect(try store.activeVersion() == 1)
    switchNow.record("switch")
    let report = try await follower.value
    #expect(report.switched)
    #expect(try store.activeVersion() == 2)

    // The old handle's commits are refused with a clear error, nothing written.
    let v1End = try store.lastSequence()
    do {
      try await store.commit { tx in try tx.insert("AddressBook", ["firstName": .string("late")]) }
      Issue.record("a commit of the old version landed after the switch")
    } catch let e as StoreError {
      #expect(e.code == .versionChanged)
      #expect("\(e)".contains("version"))
    }
    #expect(try store.lastSequence() == v1End)
    // Moved to the new version, a caller's commit lands there.
    let v2 = try store.atActiveVersion()
    #expect(v2.model.version == 2)
    let v2EndAtSwitch = try v2.lastSequence()
    let after = try await v2.commit { tx in
      try tx.insert("PhoneBook", ["phoneNumber": .string("03-1"), "type": .int16(1)])
    }
    #expect(after.commit?.firstSequence == v2EndAtSwitch + 1)

    try await waitUntil { entries.all.contains { if case .commit(_, 2) = $0 { true } else { false } } }
    subscriber.cancel()
    let seen = entries.all
    let v1Commits = try store.read { try $0.commits() }
    var index = 0
    for c in v1Commits {
      guard case .commit(let got, let version) = seen[index] else {
        Issue.record("expected v1 commit \(c.firstSequence), got \(seen[index])")
        return
      }
      #expect(version == 1 && got.firstSequence == c.firstSequence)
      index += 1
    }
    guard case .switched(let notice) = seen[index] else {
      Issue.record("expected the switch notice, got \(seen[index])")
      return
    }
    #expect(notice.from == 1 && notice.to == 2)
    #expect(notice.sourceEnd == v1End && notice.position == v2EndAtSwitch)
    #expect(try store.versionSwitch(to: 2) == notice)
    // A position of the old log maps to the end of the new commit made from its commit.
    let made = try store.read(version: 2) { s in
      try s.commits().compactMap { c in c.metadata.sourceCommit.map { ($0, c.lastSequence) } }
    }
    for c in v1Commits {
      let counterpart = made.first { $0.0 == c.firstSequence }?.1
      #expect(try store.position(in: 2, correspondingTo: c.lastSequence) == counterpart)
    }
    #expect(try store.position(in: 2, correspondingTo: 0) == 0)
    #expect(try store.position(in: 2, correspondingTo: v1End) == v2EndAtSwitch)
    #expect(throws: StoreError.self) { try store.position(in: 1, correspondingTo: 1) }
    guard case .commit(let next, 2) = seen[index + 1] else {
      Issue.record("expected the first v2 commit after the switch, got \(seen[index + 1])")
      return
    }
    #expect(next.firstSequence == v2EndAtSwitch + 1)
    #expect(seen.count == index + 2)
  }

  @Test(
    "durable consumers continue in the upcast version from the positions that correspond to the ones they saved; one that saved nothing, or reset to 0 there, starts at 0"
  )
  func consumersCarryTheirPositions() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    _ = try seedStore(dir + "/s")
    let v1Commits: [Commit]
    do {
      let store = try EventStore(path: dir + "/s")
      for i in 0..<5 {
        try await store.commit { tx in
          try tx.insert(
            "AddressBook", ["firstName": .string("c\(i)"), "lastName": .string("x"), "phone1": .string("0\(i)")])
        }
      }
      v1Commits = try store.read { try $0.commits() }
      try await store.consumer("mailer").acknowledge(v1Commits[4])
      try await store.consumer("done").acknowledge(v1Commits[v1Commits.count - 1])
      try await store.consumer("fresh").reset(to: 0)
    }
    _ = try EventStore.upcast(at: dir + "/s", to: try Examples.v2(), mapping: try Examples.mapping())
    let store = try EventStore(path: dir + "/s")
    #expect(store.model.version == 2)
    let carried = try store.position(in: 2, correspondingTo: v1Commits[4].lastSequence)
    #expect(carried > 0)
    #expect(try store.consumer("mailer").position() == carried)
    // Its commits go on with the one made from the next source commit.
    var commits = try store.consumer("mailer").commits().makeAsyncIterator()
    #expect(try await commits.next()?.metadata.sourceCommit == v1Commits[5].firstSequence)
    #expect(try store.consumer("done").position() == store.versionSwitch(to: 2)?.position)
    #expect(try store.consumer("fresh").position() == 0)
    #expect(try store.consumer("never").position() == 0)
    // A position saved in the new version is its own, 0 included; the old ones stay.
    try await store.consumer("done").reset(to: 0)
    #expect(try store.consumer("done").position() == 0)
    try await store.consumer("mailer").acknowledge(through: carried + 1)
    #expect(try store.consumer("mailer").position() == carried + 1)
    #expect(try store.consumerPositions().map(\.name).sorted() == ["done", "mailer"])
  }

  @Test("a second following upcast of the store is refused while one runs, and a request to switch to nothing")
  func secondBuilderRefused() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    _ = try seedStore(dir + "/s")
    let store = try EventStore(path: dir + "/s")
    #expect(throws: MigrationError.self) { try store.requestSwitch(to: 2) }
    let stop = Recorder()
    let follower = Self.follow(store, FollowControl(stop: { !stop.all.isEmpty }))
    try await waitUntil { (try? store.read(version: 2) { try $0.commits().count }) == 3 }
    do {
      _ = try store.followingUpcast(through: [try Examples.v2()], mappings: [try Examples.mapping()])
      Issue.record("a second following upcast ran")
    } catch let e as MigrationError {
      #expect("\(e)".contains("another upcast is building"))
    }
    stop.record("stop")
    let report = try await follower.value
    #expect(!report.switched)
    #expect(try store.activeVersion() == 1)
  }

  @Test("metrics and health show how far an unfinished upcast lags behind the log it builds from")
  func upcastLagInMetrics() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    _ = try seedStore(dir + "/s")
    let store = try EventStore(path: dir + "/s")
    #expect(try store.metrics().upcastLag.isEmpty)
    let stop = Recorder()
    let follower = Self.follow(store, FollowControl(stop: { !stop.all.isEmpty }))
    try await waitUntil { (try? store.read(version: 2) { try $0.commits().count }) == 3 }
    stop.record("stop")
    _ = try await follower.value
    // Stopped caught up: nothing to do; then commits it has not done.
    #expect(try store.metrics().upcastLag.map(\.version) == [2])
    #expect(try store.metrics().upcastLag.first?.events == 0)
    let before = try store.lastSequence()
    for i in 0..<3 {
      try store.write { tx in
        _ = try tx.insert("AddressBook", ["firstName": .string("late \(i)"), "lastName": .string("x")])
      }
    }
    let metrics = try store.metrics()
    #expect(metrics.upcastLag.first?.events == (try store.lastSequence()) - before)
    #expect(metrics.prometheusText(includingProcess: false).contains(#"eventgraph_upcast_lag_events{version="2"}"#))
    #expect(try store.health().checks.contains { $0.name == "upcast:v2" && $0.isHealthy })
    #expect(try store.health(maxConsumerLag: 1).problems.map(\.name) == ["upcast:v2"])
  }
}

/// The entries a subscriber received, from its task.
final class Entries: Sendable {
  private let entries = Locked<[LogEntry]>([])
  func append(_ e: LogEntry) { entries.withLock { $0.append(e) } }
  var all: [LogEntry] { entries.withLock { $0 } }
}

/// Waits until `condition` holds, looking every 10 ms (for at most a minute).
func waitUntil(_ condition: () throws -> Bool) async throws {
  for _ in 0..<6000 {
    if try condition() { return }
    try await Task.sleep(for: .milliseconds(10))
  }
  Issue.record("the condition never held")
}
