import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("The log interface under SIGKILL: checkpoints with their commits, version switches")
struct LogInterfaceKillTests {
  /// Starts `StressWriter` with `arguments` and kills it once it has reported at least
  /// `after` steps, plus a random few milliseconds; returns the steps it reported done.
  static func killMidway(_ path: String, _ arguments: [String], after: Int, g: inout SeededGenerator) throws -> Int {
    let child = try Child("StressWriter", [path] + arguments)
    let reached = child.wait(seconds: 60) { $0.lines.count >= after }
    #expect(reached, "the writer reported \(child.lines.count) steps in 60 s")
    usleep(UInt32.random(in: 0...20_000, using: &g))
    kill(child.process.processIdentifier, SIGKILL)
    _ = child.finish(seconds: 10)
    return child.lines.filter { $0.hasPrefix("done ") }.count
  }

  @Test("a checkpoint written with each commit survives every kill together with its commit", arguments: [UInt64(11)])
  func checkpointsSurviveKills(seed: UInt64) throws {
    var g = SeededGenerator(seed: seed)
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("eg-kill-checkpoint-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/store"
    var acknowledged = 0
    for _ in 0..<(4 * stressFactor) {
      acknowledged += try Self.killMidway(
        path, ["--checkpoint", "--per-commit", "2"], after: Int.random(in: 1...30, using: &g), g: &g)
      let store = try EventStore(path: path)
      let groups = try store.read { try $0.objects(of: "Group").count }
      let checkpoint = try store.checkpoint(named: "stress").map { Int(String(decoding: $0, as: UTF8.self)) }
      #expect(checkpoint == groups, "the checkpoint says \(String(describing: checkpoint)), the store holds \(groups)")
      #expect(groups >= acknowledged, "\(acknowledged) commits were acknowledged, \(groups) landed")
      #expect(try store.verify().isOK)
    }
  }

  @Test("a store killed while it switches versions back and forth opens at one of them, whole", arguments: [UInt64(5)])
  func versionSwitchesSurviveKills(seed: UInt64) throws {
    var g = SeededGenerator(seed: seed)
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("eg-kill-switch-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/store"
    var acknowledged = 0
    for _ in 0..<(4 * stressFactor) {
      acknowledged += try Self.killMidway(
        path, ["--switch-versions", "--per-commit", "2"], after: Int.random(in: 1...12, using: &g), g: &g)
      let (active, here) = try Self.checkWhole(path)
      // Each acknowledged step committed a group at the version it switched away from.
      let total = try Self.groups(at: active == 1 ? 2 : 1, in: path) + here
      #expect(total >= acknowledged, "\(acknowledged) steps were acknowledged, \(total) groups landed")
    }
  }

  /// Opens the store (closed on return), checks it is whole at one of its two versions, and
  /// returns that version and its groups.
  private static func checkWhole(_ path: String) throws -> (version: Int, groups: Int) {
    let store = try EventStore(path: path)
    #expect([1, 2].contains(store.model.version))
    #expect(try store.versions() == [1, 2])
    #expect(try store.verify().isOK)
    return (store.model.version, try store.read { try $0.objects(of: "Group").count })
  }

  /// The groups of the version that is not active: switched to, counted, and switched back.
  private static func groups(at version: Int, in path: String) throws -> Int {
    let active = try switchStore(path, to: version)
    let count = try EventStore(path: path).read { try $0.objects(of: "Group").count }
    _ = try switchStore(path, to: active)
    return count
  }

  /// Switches the store at `path` to `version` from a handle that closes on return; returns
  /// the version it was at.
  private static func switchStore(_ path: String, to version: Int) throws -> Int {
    let store = try EventStore(path: path)
    try store.switchVersion(to: version)
    return store.model.version
  }
}
