import Foundation
import Testing

@Suite("eventtool append and import: per-commit output, resumable runs, bounded memory")
struct CLIWritesTests {
  static let eventtool = ToolRunner.productsDirectory.appendingPathComponent("eventtool")

  /// A running `eventtool` whose standard input the test writes and whose output it reads
  /// line by line while it runs.
  final class LiveProcess {
    let process = Process()
    let stdin = Pipe()
    let stdout = Pipe()
    private var pending: [UInt8] = []

    init(_ arguments: [String]) throws {
      process.executableURL = CLIWritesTests.eventtool
      process.arguments = arguments
      process.standardInput = stdin
      process.standardOutput = stdout
      process.standardError = FileHandle.nullDevice
      try process.run()
    }

    func write(_ text: String) { stdin.fileHandleForWriting.write(Data(text.utf8)) }

    /// The next line of output; `nil` at its end.
    func readLine() -> String? {
      while true {
        if let lf = pending.firstIndex(of: 10) {
          defer { pending.removeSubrange(...lf) }
          return String(decoding: pending[..<lf], as: UTF8.self)
        }
        let data = stdout.fileHandleForReading.availableData
        if data.isEmpty { return nil }
        pending += data
      }
    }

    func finish() -> Int32 {
      try? stdin.fileHandleForWriting.close()
      while readLine() != nil {}
      process.waitUntilExit()
      return process.terminationStatus
    }
  }

  static func initStore(_ path: String, _ model: String = "/AddressBook.v1.model.json") throws {
    let r = try ToolRunner.eventtool(["init", path, "--model", examples + model])
    #expect(r.status == 0, "\(r.err)")
  }

  @Test("append prints each commit as soon as it lands, before the rest of its input is even written")
  func perCommitOutput() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.initStore(dir + "/s")
    for json in [false, true] {
      let live = try LiveProcess(["append", dir + "/s", "-"] + (json ? ["--json"] : []))
      live.write(
        """
        {"commit": "a\(json)", "type": "insert", "object": "$p", "entity": "AddressBook"}
        {"commit": "a\(json)", "type": "set", "object": "$p", "key": "firstName", "value": "桃"}
        {"commit": "a\(json)", "type": "set", "object": "$p", "key": "lastName", "value": "太郎"}
        {"commit": "b\(json)", "type": "set", "object": "$p", "key": "phone1", "value": "1"}

        """)
      // The first commit ends where the next label starts: its line comes while stdin is open.
      let first = try #require(live.readLine())
      if json {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect(object["commit"] as? String == "atrue")
        #expect(object["duplicate"] as? Bool == false)
        #expect((object["placeholders"] as? [String: String])?["$p"] != nil)
      } else {
        #expect(first.hasPrefix("commit 'afalse': sequences "))
        #expect(live.readLine()?.hasPrefix("$p = AddressBook/") == true)
      }
      live.write(#"{"commit": "c\#(json)", "type": "set", "object": "$p", "key": "phone2", "value": "2"}"# + "\n")
      #expect(live.finish() == 0)
    }
  }

  @Test("append reruns skip what landed: idempotency keys are reported as duplicates, expectations refuse")
  func appendRerun() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.initStore(dir + "/s")
    let events = """
      {"commit": "c1", "idempotencyKey": "k1", "type": "insert", "object": "$momo", "entity": "AddressBook"}
      {"commit": "c1", "type": "set", "object": "$momo", "key": "firstName", "value": "桃"}
      {"commit": "c1", "type": "set", "object": "$momo", "key": "lastName", "value": "太郎"}
      {"commit": "c2", "idempotencyKey": "k2", "expect": {"$momo": 1}, "type": "set", "object": "$momo", "key": "phone1", "value": "1"}
      """
    let first = try ToolRunner.eventtool(["append", dir + "/s", "-"], input: events)
    #expect(first.status == 0, "\(first.err)")
    #expect(first.out == "commit 'c1': sequences 1...3\n$momo = AddressBook/1\ncommit 'c2': sequences 4...4\n")
    let again = try ToolRunner.eventtool(["append", dir + "/s", "-", "--json"], input: events)
    #expect(again.status == 0)
    let lines = again.out.split(separator: "\n").map(String.init)
    #expect(lines.count == 3)
    #expect(
      lines[0]
        == #"{"commit": "c1", "seq": 1, "lastSeq": 3, "duplicate": true, "placeholders": {"$momo": "AddressBook/1"}}"#)
    #expect(lines[2].hasPrefix(#"{"commits": [{"commit": "c1", "seq": 1, "lastSeq": 3, "duplicate": true}"#))
    let stale =
      #"{"commit": "c3", "expect": {"AddressBook/1": 1}, "type": "set", "object": "AddressBook/1", "key": "phone2", "value": "2"}"#
    let refused = try ToolRunner.eventtool(["append", dir + "/s", "-", "--json"], input: stale)
    #expect(refused.status == 1)
    #expect(
      refused.err.contains(
        "line 1: commit 'c3' refused: AddressBook/1 moved: the commit expected version 1, but its last commit is now at 4"
      ))
    #expect(refused.out.contains(#""conflict": {"object": "AddressBook/1", "expected": 1, "actual": 4}"#))
    let ahead =
      #"{"commit": "c4", "expect": {"logEnd": 99}, "type": "set", "object": "AddressBook/1", "key": "phone2", "value": "2"}"#
    let r = try ToolRunner.eventtool(["append", dir + "/s", "-"], input: ahead)
    #expect(r.status == 1 && r.err.contains("the log ends at 4: the commit expected it to end at 99"))
    #expect(try ToolRunner.eventtool(["log", dir + "/s", "--json"]).out.split(separator: "\n").count == 4)
  }

  @Test("import reports a resumed run, refuses an export into a used store, and imports it with --new-identities")
  func importReruns() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.initStore(dir + "/s", "/Company.model.json")
    let file = dir + "/acme.jsonl"
    try """
    {"id": "acme", "entity": "Company", "attributes": {"name": "ACME"}, "relationships": {"employees": ["kaguya", "taro"]}}
    {"id": "taro", "entity": "Employee", "attributes": {"name": "桃太郎"}}
    {"id": "kaguya", "entity": "Employee", "attributes": {"name": "かぐや姫"}, "relationships": {"manager": "taro"}}
    """.write(toFile: file, atomically: true, encoding: .utf8)
    let first = try ToolRunner.eventtool(["import", dir + "/s", file, "--batch", "2"])
    #expect(first.out == "imported 3 objects in 2 commit(s) (sequences 1...5, 6...9)\n", "\(first.err)")
    let again = try ToolRunner.eventtool(["import", dir + "/s", file])
    #expect(again.out == "already imported: 3 objects, through line 3; nothing to do\n")
    let export = try ToolRunner.eventtool(["export", dir + "/s"]).out
    let refused = try ToolRunner.eventtool(["import", dir + "/s", "-"], input: export)
    #expect(refused.status == 1)
    #expect(refused.err.contains("standard input: line 1: id: 'Company/1' is a store identity"))
    let renewed = try ToolRunner.eventtool(["import", dir + "/s", "-", "--new-identities"], input: export)
    #expect(renewed.status == 0 && renewed.out.hasPrefix("imported 3 objects"))
  }

  /// The peak of a process's anonymous resident memory, sampled from /proc until it ends.
  static func peakAnonymousMemory(of process: Process) -> Int {
    var peak = 0
    let path = "/proc/\(process.processIdentifier)/status"
    while process.isRunning {
      if let status = try? String(contentsOfFile: path, encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
        let kb = Int(line.split(separator: " ").dropFirst().first ?? "")
      {
        peak = max(peak, kb * 1024)
      }
      Thread.sleep(forTimeInterval: 0.02)
    }
    return peak
  }

  /// About `bytes` of Company/Employee lines: companies first, then employees that name
  /// their company, their manager and their department.
  static func companyFile(_ path: String, bytes: Int) throws -> Int {
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var (written, lines, employee) = (0, 0, 0)
    var chunk = ""
    var company = 0
    while written < bytes {
      company += 1
      chunk +=
        #"{"id": "c\#(company)", "entity": "Company", "attributes": {"name": "Company \#(company)"}, "relationships": {"departments": ["d\#(company)"]}}"#
        + "\n"
      chunk +=
        #"{"id": "d\#(company)", "entity": "Department", "attributes": {"name": "Department \#(company)"}}"# + "\n"
      lines += 2
      for k in 0..<20 {
        employee += 1
        let manager = k > 0 ? #", "manager": "e\#(employee - k)""# : ""
        chunk +=
          #"{"id": "e\#(employee)", "entity": "Employee", "attributes": {"name": "Employee number \#(employee)", "salary": "\#(1000 + employee)", "badge": "6F9619FF-8B86-D011-B42D-\#(String(format: "%012d", employee))"}, "relationships": {"company": "c\#(company)", "department": "d\#(company)"\#(manager)}}"#
          + "\n"
        lines += 1
      }
      if chunk.utf8.count > 1 << 20 {
        written += chunk.utf8.count
        handle.write(Data(chunk.utf8))
        chunk = ""
      }
    }
    handle.write(Data(chunk.utf8))
    return lines
  }

  @Test("import streams a 30 MB file with less than 64 MiB of anonymous memory")
  func boundedMemory() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.initStore(dir + "/s", "/Company.model.json")
    let lines = try Self.companyFile(dir + "/big.jsonl", bytes: 30 << 20)
    let p = Process()
    p.executableURL = Self.eventtool
    p.arguments = ["import", dir + "/s", dir + "/big.jsonl", "--batch", "1000"]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    let peak = Self.peakAnonymousMemory(of: p)
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    #expect(text.hasPrefix("imported \(lines) objects"))
    #if EVENTGRAPH_SANITIZE
      // AddressSanitizer's shadow memory and quarantine are anonymous memory too: the
      // bound holds only for an ordinary build (Tools/sanitize defines this condition).
      #expect(peak > 0)
    #else
      #expect(peak > 0 && peak < 64 << 20, "peak anonymous memory \(peak >> 20) MiB")
    #endif
  }
}
