import Foundation
import Testing

@Suite("eventtool end to end, as a user runs it")
struct EndToEndTests {
  static let people = """
    {"id": "p1", "entity": "AddressBook", "attributes": {"firstName": "桃", "lastName": "太郎"}, "relationships": {"phones": ["t1", "t2"]}}
    {"id": "t1", "entity": "PhoneBook", "attributes": {"phoneNumber": "123-4567-7891", "type": 1}}
    {"id": "t2", "entity": "PhoneBook", "attributes": {"phoneNumber": "090-111-9999", "type": 2}, "relationships": {"addressBook": "p1"}}
    {"id": "p2", "entity": "AddressBook", "attributes": {"firstName": "一寸", "lastName": "法師"}}

    """

  @Test("import, export, import again and export give the same text")
  func roundTrip() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let model = examples + "/AddressBook.v2.model.json"
    #expect(try ToolRunner.eventtool(["init", dir + "/a", "--model", model]).status == 0)
    let imported = try ToolRunner.eventtool(["import", dir + "/a", "-"], input: Self.people)
    #expect(imported.status == 0, "\(imported.err)")
    let first = try ToolRunner.eventtool(["export", dir + "/a"])
    #expect(first.status == 0)
    #expect(first.out.split(separator: "\n").count == 4)
    #expect(first.out.contains(#""phones": ["PhoneBook/2", "PhoneBook/3"]"#))
    #expect(first.out.contains(#""addressBook": "AddressBook/1""#))
    #expect(try ToolRunner.eventtool(["init", dir + "/b", "--model", model]).status == 0)
    #expect(try ToolRunner.eventtool(["import", dir + "/b", "-"], input: first.out).status == 0)
    let second = try ToolRunner.eventtool(["export", dir + "/b"])
    #expect(second.out == first.out)
    // A new process sees everything the earlier ones committed.
    let shown = try ToolRunner.eventtool(["show", dir + "/b", "AddressBook/1", "--json"])
    #expect(shown.out.contains("桃"))
    #expect(try ToolRunner.eventtool(["verify", dir + "/b"]).status == 0)
  }

  @Test("append stops at the first refused commit, names its line and keeps earlier commits")
  func appendStops() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    #expect(
      try ToolRunner.eventtool(["init", dir + "/s", "--model", examples + "/AddressBook.v1.model.json"]).status == 0)
    let events = """
      {"commit": "c1", "type": "insert", "object": "$momo", "entity": "AddressBook"}
      {"commit": "c1", "type": "set", "object": "$momo", "key": "firstName", "value": "桃"}
      {"commit": "c1", "type": "set", "object": "$momo", "key": "lastName", "value": "太郎"}
      {"commit": "c2", "type": "set", "object": "$momo", "key": "phone1", "value": 42}
      {"commit": "c3", "type": "set", "object": "$momo", "key": "phone2", "value": "090"}
      """
    let r = try ToolRunner.eventtool(["append", dir + "/s", "-", "--json"], input: events)
    #expect(r.status == 1)
    #expect(r.out.contains(#""$momo": "AddressBook/1""#))
    #expect(r.err.contains("line 4"))
    let log = try ToolRunner.eventtool(["log", dir + "/s", "--json"])
    #expect(log.out.split(separator: "\n").count == 3)
    // The refused commit's value, as a value: a commit time may contain "090" too.
    #expect(!log.out.contains(#""value": "090""#))
    #expect(!log.out.contains("phone2"))
  }

  /// A new store at `store` with the v2 address book model, holding ``people``.
  static func importPeople(into store: String) throws {
    #expect(try ToolRunner.eventtool(["init", store, "--model", examples + "/AddressBook.v2.model.json"]).status == 0)
    #expect(try ToolRunner.eventtool(["import", store, "-"], input: people).status == 0)
  }

  @Test("log --json prints the FORMATS.md shape")
  func logJSON() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.importPeople(into: dir + "/s")
    let log = try ToolRunner.eventtool(["log", dir + "/s", "--json", "--object", "PhoneBook/3"])
    let lines = log.out.split(separator: "\n")
    #expect(lines.first?.hasPrefix(#"{"seq": "#) == true)
    #expect(log.out.contains(#""type": "insert", "object": "PhoneBook/3", "entity": "PhoneBook"}"#))
    #expect(log.out.contains(#""type": "link", "object": "AddressBook/1", "key": "phones", "target": "PhoneBook/3""#))
  }

  @Test("stats --json counts the log and objects, and gives the file's size beside the bytes in use")
  func statsJSON() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.importPeople(into: dir + "/s")
    let r = try ToolRunner.eventtool(["stats", dir + "/s", "--json"])
    #expect(r.status == 0)
    let json = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    let commits = try #require(json["commits"] as? Int)
    #expect(commits >= 1)
    let file = try #require(json["fileSize"] as? Int)
    let used = try #require(json["usedSize"] as? Int)
    let map = try #require(json["mapSize"] as? Int)
    // A durable store keeps up to 1.5 MiB of zeros past its data, never beyond the map.
    #expect(used > 0 && used <= file && file <= used + 3 << 19 && file <= map, "file \(file), used \(used)")
    let text = try ToolRunner.eventtool(["stats", dir + "/s"])
    #expect(text.out.contains("file     \(file) bytes (\(used) in use, map \(map) bytes)"))
  }

  @Test("verify finds a flipped byte in a commit and names its sequence")
  func flippedByte() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = dir + "/s"
    #expect(try ToolRunner.eventtool(["init", store, "--model", examples + "/AddressBook.v2.model.json"]).status == 0)
    #expect(try ToolRunner.eventtool(["import", store, "-"], input: Self.people).status == 0)
    // Flip a byte inside the commit record with LMDB's own tools: dump, edit, load.
    let dump = try ToolRunner.runSystem("/usr/bin/mdb_dump", ["-s", "log.v2", store])
    #expect(dump.status == 0)
    var lines = dump.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let headerEnd = try #require(lines.firstIndex(of: "HEADER=END"))
    // Line after the key line is the value, in hex; flip one nibble in the middle.
    var value = Array(lines[headerEnd + 2])
    let i = value.count / 2
    value[i] = value[i] == "0" ? "1" : "0"
    lines[headerEnd + 2] = String(value)
    let load = try ToolRunner.runSystem(
      "/usr/bin/mdb_load", ["-s", "log.v2", store], input: lines.joined(separator: "\n"))
    #expect(load.status == 0, "\(load.err)")
    let verify = try ToolRunner.eventtool(["verify", store])
    #expect(verify.status == 1)
    #expect(verify.err.contains("log entry 1"))
    #expect(verify.err.contains("checksum"))
  }

  @Test(
    "bad input gets a clear error and the right exit status",
    arguments: [
      (["init"], 2, "missing"),
      (["verifx", "x"], 2, "did you mean 'verify'"),
      (["export", "/nonexistent/store", "--entiti", "A"], 2, "did you mean '--entity'"),
      (["export", "/nonexistent/store"], 1, "is not an EventGraph store"),
      (["show", "/nonexistent/store", "A/1", "--at", "-1"], 2, "sequence number"),
    ])
  func badCommandLines(_ arguments: [String], _ status: Int, _ message: String) throws {
    let r = try ToolRunner.eventtool(arguments)
    #expect(Int(r.status) == status)
    #expect(r.err.contains(message), "\(r.err)")
  }

  @Test("a malformed model and a bad import line are named precisely, and nothing is written")
  func badFiles() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let bad = dir + "/bad.model.json"
    try #"{"name": "X", "version": 1, "entities": [{"name": "A", "attributes": [{"name": "n", "type": "strin"}]}]}"#
      .write(toFile: bad, atomically: true, encoding: .utf8)
    let r = try ToolRunner.eventtool(["init", dir + "/s", "--model", bad])
    #expect(r.status == 1)
    #expect(r.err.contains("bad.model.json"))
    #expect(r.err.contains("entities[0].attributes[0]"))
    #expect(r.err.contains("strin"))
    #expect(
      try ToolRunner.eventtool(["init", dir + "/t", "--model", examples + "/AddressBook.v2.model.json"]).status == 0)
    let lines = """
      {"id": "a", "entity": "AddressBook", "attributes": {"firstName": "x", "lastName": "y"}}
      {"id": "b", "entity": "PhoneBook", "attributes": {"phoneNumber": "1", "type": "mobile"}}
      """
    let imp = try ToolRunner.eventtool(["import", dir + "/t", "-"], input: lines)
    #expect(imp.status == 1)
    #expect(imp.err.contains("line 2: attributes.type"))
    let dangling =
      #"{"id": "a", "entity": "AddressBook", "attributes": {"firstName": "x", "lastName": "y"}, "relationships": {"phones": ["nope"]}}"#
    let d = try ToolRunner.eventtool(["import", dir + "/t", "-"], input: dangling)
    #expect(d.status == 1)
    #expect(d.err.contains("'nope' is not an id in this file"))
    #expect(try ToolRunner.eventtool(["export", dir + "/t"]).out.isEmpty)
  }

  @Test("every command has help with an example")
  func help() throws {
    let list = try ToolRunner.eventtool(["--help"])
    #expect(list.status == 0)
    for command in ["init", "import", "append", "export", "log", "show", "stats", "verify", "rebuild", "demo"] {
      #expect(list.out.contains(command))
      let h = try ToolRunner.eventtool([command, "--help"])
      #expect(h.status == 0)
      #expect(h.out.contains("eventtool \(command)"))
    }
  }

  @Test("the demo runs the seed end to end: v1 address book, upcast with the phone split, rollback")
  func demo() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let r = try ToolRunner.eventtool(["demo", dir + "/demo"])
    #expect(r.status == 0, "\(r.err)")
    #expect(r.out.contains("$ eventtool init"))
    #expect(r.out.contains(#""firstName": "浦島""#))
    #expect(r.out.contains("ok: "))
    // The seed's expected log lines, after the upcast.
    for line in ["浦島 太郎 :Tel 090-1234-5678", "桃 太郎 :Tel 123-4567-7891", "桃 太郎 :Tel 090-111-9999"] {
      #expect(r.out.split(separator: "\n").contains(Substring(line)), "\(line)")
    }
    #expect(r.out.contains("is now at version 1"))
    #expect(r.out.contains("is now at version 2"))
    // The second seed: the copy beside the original, employees in order, managers inside the copy.
    #expect(
      r.out.contains(
        "Company/1 ACME: Employee/2 金太郎, Employee/3 花咲爺 (manager Employee/2), Employee/4 かぐや姫 (manager Employee/3)"))
    #expect(
      r.out.contains(
        "Company/6 ACME (copy): Employee/7 金太郎, Employee/8 花咲爺 (manager Employee/7), Employee/9 かぐや姫 (manager Employee/8)"
      ))
    #expect(r.out.contains(#"$ eventtool clone"#) && r.out.contains(#""Company.name=concat(name, ' (copy)')""#))
  }
}

@Suite("The CLI reference")
struct ReferenceTests {
  @Test("Docs/cli.md is what 'eventtool reference' generates, so the two never disagree")
  func referenceIsCurrent() throws {
    let r = try ToolRunner.eventtool(["reference"])
    #expect(r.status == 0)
    let file = URL(fileURLWithPath: examples).deletingLastPathComponent().appendingPathComponent("cli.md")
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(text == r.out, "regenerate with: swift run eventtool reference > Docs/cli.md")
  }

  @Test("the command descriptions have no mistakes of their own")
  func specifications() throws {
    let r = try ToolRunner.eventtool(["reference", "--bash-completion"])
    #expect(r.status == 0)
    for command in ["init", "import", "upcast", "rollback", "diagram"] { #expect(r.out.contains(command)) }
  }
}
