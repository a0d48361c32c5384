import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("eventtool upcast --follow and eventtool switch")
struct FollowingUpcastTests {
  static let upcastArguments = [
    "--model", examples + "/AddressBook.v2.model.json", "--mapping", examples + "/AddressBook.v1-v2.mapping.json",
  ]

  /// A v1 address book of 200 people with history, in `dir`.
  static func book(in dir: String) throws -> String {
    try UpcastKillTests.history(dir + "/s", people: 200)
    return dir + "/s"
  }

  /// What a committing task did: its commits that landed, and whether it was refused
  /// because the store had switched.
  struct Committed: Sendable {
    var firstSequences: [UInt64] = []
    var refusedAfterSwitch = false
    var otherErrors: [String] = []
  }

  /// Commits through the service until the store switches: inserts, and phone changes of
  /// the objects it made.
  static func commit(_ store: EventStore, task: Int) async -> Committed {
    var done = Committed()
    var mine: [ObjectID] = []
    for i in 0..<100_000 {
      do {
        let result = try await store.commit { [mine] tx -> ObjectID? in
          if i % 3 == 2, let id = mine.last {
            try tx.set(id, "phone2", .string("090-\(task)-\(i)"))
            return nil
          }
          return try tx.insert(
            "AddressBook",
            ["firstName": .string("t\(task)"), "lastName": .string("n\(i)"), "phone1": .string("03-\(i)")])
        }
        if let c = result.commit { done.firstSequences.append(c.firstSequence) }
        if let id = result.value ?? nil { mine.append(id) }
      } catch let e as StoreError where e.code == .versionChanged {
        done.refusedAfterSwitch = true
        return done
      } catch {
        done.otherErrors.append("\(error)")
        return done
      }
      try? await Task.sleep(for: .milliseconds(2))
    }
    return done
  }

  /// A following upcast under 8 committing tasks, SIGKILLed and restarted, then switched.
  ///
  /// Compared: every key and value (`mdb_dump`) of the v2 log and of its eight projections
  /// (objects, identities, links, entities, history, dedupe, index, members), commit times
  /// included (a v2 commit carries its source commit's time). Not compared: `meta` (the
  /// builder's process ID, the switch's figures) and the scratch databases (emptied).
  @Test(
    "a following upcast under 8 committing tasks, SIGKILLed and restarted, then switched, ends byte for byte like a one-shot upcast of the final log"
  )
  func killedFollowerThenSwitch() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/a"
    try UpcastKillTests.history(path, people: 300)
    let store = try EventStore(path: path)
    let committers = (0..<8).map { t in Task { await Self.commit(store, task: t) } }
    var g = SeededGenerator(seed: 19)
    var kills = 0
    for _ in 0..<6 {
      let follower = try Child("eventtool", ["upcast", path] + Self.upcastArguments + ["--follow", "--batch", "40"])
      try await Task.sleep(for: .milliseconds(Int(60 + g.next() % 300)))
      if follower.process.isRunning {
        kill(follower.process.processIdentifier, SIGKILL)
        kills += 1
      }
      _ = try await offPool { follower.finish(seconds: 10) }
    }
    #expect(kills > 0)
    // The last follower runs until the switch, asked while the committers still commit.
    let follower = try Child("eventtool", ["upcast", path] + Self.upcastArguments + ["--follow", "--batch", "40"])
    let caughtUp = try await offPool { follower.wait(seconds: 60) { $0.errorOutput.contains("caught up") } }
    #expect(caughtUp, "\(follower.errorOutput)")
    try await Task.sleep(for: .milliseconds(200))
    let switched = try await offPool { try ToolRunner.eventtool(["switch", path, "--to", "2"]) }
    #expect(switched.status == 0, "\(switched.err)")
    let status = try await offPool { follower.finish(seconds: 30) }
    #expect(status == 0, "\(follower.errorOutput)")
    var landed: [UInt64] = []
    for c in committers {
      let done = await c.value
      #expect(done.otherErrors.isEmpty, "\(done.otherErrors)")
      #expect(done.refusedAfterSwitch, "a committer was never refused: its commits went on in version 1")
      landed += done.firstSequences
    }
    #expect(!landed.isEmpty)
    // No commit lost or applied twice: every source commit has exactly one counterpart in
    // the new log, and every commit that returned to its caller is among them.
    let sources = try store.read { try $0.commits().map(\.firstSequence) }
    let counterparts = try store.read(version: 2) { try $0.commits().compactMap(\.metadata.sourceCommit) }
    #expect(counterparts == sources)
    #expect(Set(landed).isSubset(of: Set(sources)))
    #expect(try store.activeVersion() == 2)
    #expect(switched.out.contains("version 1's log ended at sequence \(try store.lastSequence());"), "\(switched.out)")

    // The same final v1 log, upcast in one shot: a copy switched back to v1 and upcast again.
    try FileManager.default.copyItem(atPath: path, toPath: dir + "/b")
    #expect(try ToolRunner.eventtool(["rollback", dir + "/b"]).status == 0)
    let oneShot = try ToolRunner.eventtool(["upcast", dir + "/b"] + Self.upcastArguments)
    #expect(oneShot.status == 0, "\(oneShot.err)")
    let a = try UpcastKillTests.dump(path)
    let b = try UpcastKillTests.dump(dir + "/b")
    for (name, text) in b {
      #expect(a[name] == text, "\(name).v2 differs")
      #expect(!text.isEmpty || name == "dedupe" || name == "members")
    }
    let verify = try ToolRunner.eventtool(["verify", path])
    #expect(verify.status == 0, "\(verify.err)")
  }

  @Test("switch and a second --follow are refused with a clear error, the store unchanged and verifying")
  func refusals() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = try Self.book(in: dir)
    func unchanged(_ version: Int) throws {
      #expect(try EventStore(path: path, options: StoreOptions(readOnly: true)).activeVersion() == version)
      let verify = try ToolRunner.eventtool(["verify", path])
      #expect(verify.status == 0, "\(verify.err)")
    }
    // No build at all: every refusal leaves every byte of the store as it was.
    let before = try StoreContents(path)
    let none = try ToolRunner.eventtool(["switch", path, "--to", "2"])
    #expect(none.status == 1)
    #expect(none.err.contains("has no version 2, and no upcast is building it"), "\(none.err)")
    let same = try ToolRunner.eventtool(["switch", path, "--to", "1"])
    #expect(same.err.contains("already at version 1"), "\(same.err)")
    #expect(try ToolRunner.eventtool(["upcast", path, "--switch"] + Self.upcastArguments).status == 2)
    #expect(try StoreContents(path) == before)
    try unchanged(1)

    let follower = try Child("eventtool", ["upcast", path] + Self.upcastArguments + ["--follow"])
    #expect(follower.wait(seconds: 60) { $0.errorOutput.contains("caught up") }, "\(follower.errorOutput)")
    // A second builder, following or one-shot, while the first runs.
    for extra in [["--follow"], []] {
      let second = try ToolRunner.eventtool(["upcast", path] + Self.upcastArguments + extra)
      #expect(second.status == 1)
      #expect(second.err.contains("another upcast is building a version of"), "\(second.err)")
      #expect(second.err.contains("process \(follower.process.processIdentifier)"), "\(second.err)")
    }
    // Readers of the version being built.
    let v2Log = try ToolRunner.eventtool(["log", path, "--version", "2", "--to", "40"])
    #expect(v2Log.status == 0, "\(v2Log.err)")
    #expect(v2Log.out.contains("v2  ") && v2Log.out.contains("from source commit at 1"), "\(v2Log.out)")
    let phones = try ToolRunner.eventtool(["fetch", path, "PhoneBook", "--version", "2", "--limit", "3"])
    #expect(phones.status == 0 && phones.out.contains("PhoneBook/"), "\(phones.err)")
    // One object of the version being built; the active version has no such entity.
    let phone = phones.out.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("PhoneBook/") }.map(String.init)
    let shown = try ToolRunner.eventtool(["show", path, phone ?? "PhoneBook/?", "--version", "2"])
    #expect(shown.status == 0 && shown.out.hasPrefix(phone ?? "PhoneBook/?"), "\(shown.out)\(shown.err)")
    #expect(shown.out.contains("phoneNumber = "), "\(shown.out)")
    #expect(try ToolRunner.eventtool(["show", path, phone ?? "PhoneBook/?"]).status == 1)
    let noVersion = try ToolRunner.eventtool(["log", path, "--version", "9"])
    #expect(noVersion.status == 1 && noVersion.err.contains("9"), "\(noVersion.err)")
    let missing = try ToolRunner.eventtool(["switch", path, "--to", "9"])
    #expect(missing.status == 1)
    #expect(missing.err.contains("has no version 9"), "\(missing.err)")
    // Killed: its build stays, at its checkpoint, and cannot be switched to without it.
    kill(follower.process.processIdentifier, SIGKILL)
    _ = follower.finish(seconds: 10)
    let orphaned = try StoreContents(path)
    let orphan = try ToolRunner.eventtool(["switch", path, "--to", "2"])
    #expect(orphan.status == 1)
    #expect(orphan.err.contains("no following upcast is running to build version 2"), "\(orphan.err)")
    #expect(try ToolRunner.eventtool(["rollback", path, "--to", "2"]).status == 1)
    #expect(try StoreContents(path) == orphaned)
    try unchanged(1)

    // The killed builder blocks nobody: a new one resumes and switches when caught up,
    // while `log --follow` follows the log across the switch.
    let start = try EventStore(path: path, options: StoreOptions(readOnly: true)).lastSequence()
    let logFollower = try Child("eventtool", ["log", path, "--follow", "--from", "\(start + 1)"])
    // A commit of version 1 that the follower prints: it follows version 1 before the
    // upcast resumes (one that opened the store after the switch would read version 2).
    let v1Line = #"{"id": "f", "entity": "AddressBook", "attributes": {"firstName": "F", "lastName": "L"}}"#
    #expect(try ToolRunner.eventtool(["import", path, "-"], input: v1Line + "\n").status == 0)
    #expect(logFollower.wait(seconds: 30) { $0.output.contains("firstName = 'F'") }, "\(logFollower.errorOutput)")
    let end = try EventStore(path: path, options: StoreOptions(readOnly: true)).lastSequence()
    let resumed = try ToolRunner.eventtool(["upcast", path] + Self.upcastArguments + ["--follow", "--switch"])
    #expect(resumed.status == 0, "\(resumed.err)")
    #expect(resumed.out.contains("(resumed)"), "\(resumed.out)")
    try unchanged(2)
    let line = #"{"id": "n", "entity": "PhoneBook", "attributes": {"phoneNumber": "0"}}"#
    #expect(try ToolRunner.eventtool(["import", path, "-"], input: line + "\n").status == 0)
    // Both pipes are read as they fill, each on its own: wait for what each should show.
    let notice = "the store switched from version 1 to 2 after sequence \(end)"
    let followed = logFollower.wait(seconds: 30) {
      $0.output.contains("phoneNumber = '0'") && $0.errorOutput.contains(notice)
    }
    #expect(followed, "\(logFollower.output)\n\(logFollower.errorOutput)")
    kill(logFollower.process.processIdentifier, SIGKILL)
    _ = logFollower.finish(seconds: 10)
    let again = try ToolRunner.eventtool(["switch", path, "--to", "2"])
    #expect(again.err.contains("already at version 2"), "\(again.err)")
  }

  @Test("a switch killed while it waits for the builder leaves no switch behind")
  func killedSwitch() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = try Self.book(in: dir)
    let follower = try Child("eventtool", ["upcast", path] + Self.upcastArguments + ["--follow"])
    defer {
      kill(follower.process.processIdentifier, SIGKILL)
      _ = follower.finish(seconds: 10)
    }
    #expect(follower.wait(seconds: 60) { $0.errorOutput.contains("caught up") }, "\(follower.errorOutput)")
    // The builder stopped (it keeps its lock): the switch asks, and waits.
    kill(follower.process.processIdentifier, SIGSTOP)
    let asker = try Child("eventtool", ["switch", path, "--to", "2"])
    Thread.sleep(forTimeInterval: 0.5)
    #expect(asker.process.isRunning)
    kill(asker.process.processIdentifier, SIGKILL)
    _ = asker.finish(seconds: 10)
    kill(follower.process.processIdentifier, SIGCONT)
    // A commit wakes the builder; it catches up and must not switch: nobody waits for it.
    let line = #"{"id": "w", "entity": "AddressBook", "attributes": {"firstName": "w", "lastName": "x"}}"#
    #expect(try ToolRunner.eventtool(["import", path, "-"], input: line + "\n").status == 0)
    let end = try EventStore(path: path, options: StoreOptions(readOnly: true)).lastSequence()
    #expect(follower.wait(seconds: 60) { $0.errorOutput.contains("caught up at sequence \(end)") })
    #expect(try EventStore(path: path, options: StoreOptions(readOnly: true)).activeVersion() == 1)
    #expect(follower.process.isRunning)
  }
}

/// Runs blocking work (waiting for a child process) on a thread of its own, so that the
/// tasks' pool, which may have two threads, stays free for the committing tasks.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { c in
    Thread { c.resume(with: Result { try body() }) }.start()
  }
}
