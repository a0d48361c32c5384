import Foundation
import TestSupport
import Testing

@Suite("eventtool append and import, killed with SIGKILL and run again")
struct CLIWritesKillTests {
  /// Runs `arguments` until a run ends by itself, killing runs at seeded random moments;
  /// returns what each run printed (an acknowledgement per line) and how many were killed.
  static func killUntilDone(_ arguments: [String], seed: UInt64, maxDelay: Int) throws -> (
    outputs: [String], kills: Int
  ) {
    var g = SeededGenerator(seed: seed)
    var outputs: [String] = []
    var kills = 0
    for attempt in 0..<60 {
      let p = Process()
      p.executableURL = CLIWritesTests.eventtool
      p.arguments = arguments
      let out = Pipe()
      p.standardOutput = out
      p.standardError = FileHandle.nullDevice
      try p.run()
      // The last attempts run to the end, so that the test always finishes; the first is
      // killed at once, so that one kill lands however fast the machine runs the command.
      if attempt < 50 {
        Thread.sleep(forTimeInterval: attempt == 0 ? 0 : Double(g.int(10...maxDelay)) / 1000)
        if p.isRunning {
          kill(p.processIdentifier, SIGKILL)
          kills += 1
        }
      }
      outputs.append(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
      p.waitUntilExit()
      if p.terminationReason == .exit {
        #expect(p.terminationStatus == 0)
        return (outputs, kills)
      }
    }
    Issue.record("never finished")
    return (outputs, kills)
  }

  /// A chain of commits, each inserting a person and linking the one before (by its
  /// placeholder), each with its own idempotency key.
  static func appendFile(commits: Int) -> String {
    (0..<commits).map { i in
      var lines = [
        #"{"commit": "c\#(i)", "idempotencyKey": "chain-\#(i)", "type": "insert", "object": "$e\#(i)", "entity": "Employee"}"#,
        #"{"commit": "c\#(i)", "type": "set", "object": "$e\#(i)", "key": "name", "value": "E\#(i)"}"#,
      ]
      if i > 0 {
        lines.append(
          #"{"commit": "c\#(i)", "type": "link", "object": "$e\#(i)", "key": "manager", "target": "$e\#(i - 1)"}"#)
      }
      return lines.joined(separator: "\n")
    }.joined(separator: "\n") + "\n"
  }

  @Test("append killed at random moments, then run again, lands every commit once, each acknowledged one as printed")
  func appendKilled() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let commits = 400
    try Self.appendFile(commits: commits).write(toFile: dir + "/chain.jsonl", atomically: true, encoding: .utf8)
    for s in ["a", "b"] { try CLIWritesTests.initStore(dir + "/" + s, "/Company.model.json") }
    let whole = try ToolRunner.eventtool(["append", dir + "/b", dir + "/chain.jsonl"])
    #expect(whole.status == 0, "\(whole.err)")
    let (outputs, kills) = try Self.killUntilDone(
      ["append", dir + "/a", dir + "/chain.jsonl", "--json"], seed: 41, maxDelay: 600)
    #expect(kills > 0)
    // Every commit acknowledged by any run is in the log at the sequences it was given.
    var acknowledged: [String: Int] = [:]
    for output in outputs {
      let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
      for (i, line) in lines.enumerated() where !line.isEmpty {
        // A run killed while it wrote a line leaves that line cut short: only the last.
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)) else {
          #expect(i == lines.count - 1, "a line cut short before the end: \(line)")
          continue
        }
        guard let o = parsed as? [String: Any], let label = o["commit"] as? String, let seq = o["seq"] as? Int
        else { continue }
        if let earlier = acknowledged[label] { #expect(earlier == seq, "\(label)") }
        acknowledged[label] = seq
      }
    }
    #expect(acknowledged.count == commits)
    let log = try ToolRunner.eventtool(["log", dir + "/a", "--json"]).out
    let inserts = log.split(separator: "\n").filter { $0.contains(#""type": "insert""#) }
    #expect(inserts.count == commits)
    #expect(
      try ToolRunner.eventtool(["export", dir + "/a"]).out == ToolRunner.eventtool(["export", dir + "/b"]).out)
    #expect(try ToolRunner.eventtool(["verify", dir + "/a"]).status == 0)
  }

  @Test(
    "import killed at random moments, then run again, ends with exactly the objects of an uninterrupted import",
    arguments: [nil, 150] as [Int?])
  func importKilled(batch: Int?) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    // Forward references too: each company lists its employees, who come after it.
    var text = ""
    for c in 0..<120 {
      let staff = (0..<25).map { "\"e\(c)-\($0)\"" }.joined(separator: ", ")
      text +=
        #"{"id": "c\#(c)", "entity": "Company", "attributes": {"name": "C\#(c)"}, "relationships": {"employees": [\#(staff)]}}"#
        + "\n"
      for e in 0..<25 {
        let manager = e > 0 ? #", "relationships": {"manager": "e\#(c)-\#(e - 1)"}"# : ""
        text += #"{"id": "e\#(c)-\#(e)", "entity": "Employee", "attributes": {"name": "E\#(e)"}\#(manager)}"# + "\n"
      }
    }
    try text.write(toFile: dir + "/in.jsonl", atomically: true, encoding: .utf8)
    for s in ["a", "b"] { try CLIWritesTests.initStore(dir + "/" + s, "/Company.model.json") }
    let options = batch.map { ["--batch", "\($0)"] } ?? []
    let start = ContinuousClock.now
    #expect(try ToolRunner.eventtool(["import", dir + "/b", dir + "/in.jsonl"] + options).status == 0)
    // Kills fall within the first half of an uninterrupted run's time, however fast this
    // machine is: a run slowed by load meanwhile still meets at least one.
    let (seconds, attoseconds) = start.duration(to: .now).components
    let took = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    let (outputs, kills) = try Self.killUntilDone(
      ["import", dir + "/a", dir + "/in.jsonl"] + options, seed: 7 + UInt64(batch ?? 0), maxDelay: max(20, took / 2))
    #expect(kills > 0)
    #expect(outputs.last?.contains("imported") == true || outputs.last?.contains("already imported") == true)
    #expect(
      try ToolRunner.eventtool(["export", dir + "/a"]).out == ToolRunner.eventtool(["export", dir + "/b"]).out)
    #expect(try ToolRunner.eventtool(["verify", dir + "/a"]).status == 0)
    // A further run writes nothing.
    #expect(try ToolRunner.eventtool(["import", dir + "/a", dir + "/in.jsonl"] + options).out.hasPrefix("already"))
  }
}
