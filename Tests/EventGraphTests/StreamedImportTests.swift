import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("import, streamed in batches and resumed")
struct StreamedImportTests {
  /// The Library model of Docs/formats.md: a book needs two chapters, a chapter its book.
  static func library() throws -> Model {
    try Model(
      json: Array(
        """
        {"name": "Library", "version": 1, "entities": [
          {"name": "Book", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [
             {"name": "chapters", "destination": "Chapter", "toMany": true, "ordered": true, "minCount": 2,
              "inverse": "book", "deleteRule": "cascade"},
             {"name": "shelf", "destination": "Shelf", "inverse": "books"}]},
          {"name": "Chapter", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "book", "destination": "Book", "optional": false, "inverse": "chapters"}]},
          {"name": "Shelf", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "books", "destination": "Book", "toMany": true, "inverse": "shelf"}]}]}
        """.utf8))
  }

  static func lines(_ text: String) -> [UInt8] { Array(text.utf8) }

  static func export(_ store: EventStore) throws -> [String] {
    var out: [String] = []
    try store.export { out.append($0) }
    return out
  }

  /// Companies that list employees further down, employees naming managers further down.
  static func forwardCompany(companies: Int, employees: Int) -> String {
    var lines: [String] = []
    for c in 0..<companies {
      let staff = (0..<employees).map { "\"e\(c)-\($0)\"" }.joined(separator: ", ")
      lines.append(
        #"{"id": "c\#(c)", "entity": "Company", "attributes": {"name": "C\#(c)"}, "relationships": {"employees": [\#(staff)]}}"#
      )
    }
    for c in 0..<companies {
      // Backwards through the list, so every target arrives before the one listed before it.
      for e in (0..<employees).reversed() {
        let manager = e + 1 < employees ? #", "manager": "e\#(c)-\#(e + 1)""# : ""
        lines.append(
          #"{"id": "e\#(c)-\#(e)", "entity": "Employee", "attributes": {"name": "E\#(e)"}, "relationships": {"company": "c\#(c)"\#(manager)}}"#
        )
      }
    }
    return lines.joined(separator: "\n")
  }

  @Test("batches link references to later lines when they arrive, in list order, as one commit does")
  func forwardReferences() throws {
    let text = Self.forwardCompany(companies: 3, employees: 7)
    let (one, d1) = try makeStore(try Fixtures.company(), label: "one")
    defer { removeDirectory(d1) }
    #expect(try one.importObjects(Self.lines(text)).commits.count == 1)
    for batch in [1, 2, 5, 100] {
      let (store, dir) = try makeStore(try Fixtures.company(), label: "batch\(batch)")
      defer { removeDirectory(dir) }
      let result = try store.importObjects(Self.lines(text), batch: batch)
      #expect(result.objects == 24)
      #expect(try Self.export(store) == Self.export(one), "batch \(batch)")
      #expect(try store.verify().isOK)
    }
  }

  @Test(
    "an ordered list named before its members' lines keeps its order whatever order the lines come in, in batches and resumed",
    arguments: [3, 40, 300])
  func listBeforeItsMembers(_ members: Int) throws {
    for seed in UInt64(1)...4 {
      var g = SeededGenerator(seed: seed &* 977 &+ UInt64(members))
      let staff = (0..<members).map { "\"e\($0)\"" }.joined(separator: ", ")
      var lines = [
        #"{"id": "c", "entity": "Company", "attributes": {"name": "C"}, "relationships": {"employees": [\#(staff)]}}"#
      ]
      // The members in a seeded order (in order, reversed, or shuffled), some of them naming
      // the company themselves as well.
      var order = Array(0..<members)
      switch seed % 3 {
      case 0: order.reverse()
      case 1: order.shuffle(using: &g)
      default: break
      }
      for e in order {
        let back = g.chance(0.3) ? #", "relationships": {"company": "c"}"# : ""
        lines.append(#"{"id": "e\#(e)", "entity": "Employee", "attributes": {"name": "E\#(e)"}\#(back)}"#)
      }
      let text = lines.joined(separator: "\n") + "\n"
      let batch = g.int(1...max(1, members / 3))
      let (store, dir) = try makeStore(try Fixtures.company(), label: "list\(members)-\(seed)")
      defer { removeDirectory(dir) }
      // A first run that saw only some of the lines, then the whole file, resumed.
      let cut = g.int(1...lines.count)
      let prefix = lines.prefix(cut).joined(separator: "\n") + "\n"
      let options = ImportOptions(batch: batch)
      _ = try? store.importObjects(from: JSONLinesInput(bytes: Self.lines(prefix)), options: options)
      _ = try store.importObjects(from: JSONLinesInput(bytes: Self.lines(text)), options: options)
      let names = try store.read { tx in
        let company = try #require(try tx.objects(of: "Company").first)
        return try tx.related(company, "employees").map { try tx.value($0, "name") }
      }
      #expect(names == (0..<members).map { Value.string("E\($0)") }, "seed \(seed), batch \(batch), cut \(cut)")
      #expect(try store.verify().isOK)
    }
  }

  @Test("a required relationship filled by a later line grows the batch until it is, whatever --batch says")
  func requiredRelationships() throws {
    let text = """
      {"id": "c1", "entity": "Chapter", "attributes": {"title": "The peach"}}
      {"id": "s1", "entity": "Shelf", "attributes": {"label": "A-1"}}
      {"id": "c2", "entity": "Chapter", "attributes": {"title": "Onigashima"}}
      {"id": "b1", "entity": "Book", "attributes": {"title": "Momotaro"}, "relationships": {"chapters": ["c1", "c2"], "shelf": "s1"}}
      {"id": "s2", "entity": "Shelf", "attributes": {"label": "A-2"}}
      """
    let (store, dir) = try makeStore(try Self.library())
    defer { removeDirectory(dir) }
    let result = try store.importObjects(Self.lines(text), batch: 1)
    #expect(result.commits.count == 2)
    let book = try #require(result.identities["b1"])
    let chapters = try store.read { try $0.related(book, "chapters") }
    #expect(chapters == [result.identities["c1"], result.identities["c2"]].compactMap { $0 })
  }

  @Test(
    "bad input is refused naming its lines, and the refused batch writes nothing",
    arguments: [
      (
        """
        {"id": "acme", "entity": "Company", "attributes": {"name": "ACME"}, "relationships": {"employees": ["taro"]}}
        {"id": "globex", "entity": "Company", "attributes": {"name": "Globex"}}
        {"id": "taro", "entity": "Employee", "attributes": {"name": "桃太郎"}, "relationships": {"company": "globex"}}
        """,
        "line 3: conflicting claims on Employee.company of 'taro': line 1 and line 3 give it different targets"
      ),
      (
        """
        {"id": "acme", "entity": "Company", "attributes": {"name": "ACME"}, "relationships": {"employees": ["taro"]}}
        {"id": "globex", "entity": "Company", "attributes": {"name": "Globex"}, "relationships": {"employees": ["taro"]}}
        {"id": "taro", "entity": "Employee", "attributes": {"name": "桃太郎"}}
        """,
        "line 2: conflicting claims on Employee.company of 'taro': line 1 and line 2"
      ),
      (
        """
        {"id": "taro", "entity": "Employee", "attributes": {"name": "桃太郎"}, "relationships": {"company": null}}
        {"id": "acme", "entity": "Company", "attributes": {"name": "ACME"}, "relationships": {"employees": ["taro"]}}
        """,
        "line 2: conflicting claims on Employee.company of 'taro': line 1 and line 2"
      ),
      (
        #"{"id": "x", "entity": "Employee", "attributes": {"salary": 3}}"#,
        "line 1: attributes.name: Employee.name is required and has no default"
      ),
      (
        #"{"id": "x", "entity": "Employee", "attributes": {"name": null}}"#,
        "line 1: attributes.name: Employee.name is required: null gives it no value"
      ),
      (
        """
        {"id": "a", "entity": "Employee", "attributes": {"name": "A"}}

        {"id": "b", "entity": "Employee", "attributes": {"name": "B"}, "relationships": {"manager": "zz"}}
        """,
        "line 3: relationships.manager: 'zz' is not an id in this file"
      ),
      (
        """
        {"id": "a", "entity": "Employee", "attributes": {"name": "A"}, "relationships": {"department": "b"}}
        {"id": "b", "entity": "Employee", "attributes": {"name": "B"}}
        """,
        "line 1: relationships.department: 'b' is not a Department"
      ),
      (
        """
        {"id": "a", "entity": "Employee", "attributes": {"name": "A"}}
        {"id": "a", "entity": "Employee", "attributes": {"name": "B"}}
        """,
        "line 2: id: 'a' is already used on line 1"
      ),
    ])
  func refusals(_ text: String, _ message: String) throws {
    for batch in [nil, 1] as [Int?] {
      let (store, dir) = try makeStore(try Fixtures.company(), label: "refusals")
      defer { removeDirectory(dir) }
      #expect {
        _ = try store.importObjects(Self.lines(text), batch: batch)
      } throws: { e in
        "\(e)".contains(message)
      }
      // With one commit, nothing is written; with batches, only the batches before the bad line.
      let exported = try Self.export(store)
      if batch == nil { #expect(exported.isEmpty) }
      #expect(!exported.joined().contains("taro") || message.contains("'a'"))
    }
  }

  @Test("a batch refused by the model at its end names its new objects by their lines, not by identities")
  func refusedBatchNamesLines() throws {
    let (store, dir) = try makeStore(try ErrorCodeCoverageTests.model())
    defer { removeDirectory(dir) }
    let text = """
      {"id": "reds", "entity": "Team", "attributes": {"name": "Reds", "handle": "red"}}
      {"id": "blues", "entity": "Team", "attributes": {"name": "Blues", "handle": "red"}}
      """
    #expect {
      _ = try store.importObjects(Self.lines(text))
    } throws: { e in
      // The identities the refused commit gave were never committed: the next import gets them.
      "\(e)".hasSuffix(
        "the Team of line 2: uniqueness constraint [handle] of Team: 'red' is already held by the Team of line 1")
    }
    #expect(try Self.export(store).isEmpty)
  }

  @Test("an import stopped after some batches resumes from its checkpoint and ends as an uninterrupted one")
  func resumes() throws {
    let text = Self.forwardCompany(companies: 4, employees: 6)
    let all = text.split(separator: "\n")
    let (whole, d1) = try makeStore(try Fixtures.company(), label: "whole")
    defer { removeDirectory(d1) }
    _ = try whole.importObjects(Self.lines(text), batch: 5)
    for cut in [1, 7, 12, all.count - 1] {
      let (store, dir) = try makeStore(try Fixtures.company(), label: "cut\(cut)")
      defer { removeDirectory(dir) }
      // A first run that saw only the first lines (as one killed after its commits would):
      // its last batch waits for nothing it lacks only when the cut falls after it.
      let prefix = all.prefix(cut).joined(separator: "\n") + "\n"
      _ = try? store.importObjects(from: JSONLinesInput(bytes: Self.lines(prefix)), options: ImportOptions(batch: 5))
      let resumed = try store.importObjects(
        from: JSONLinesInput(bytes: Self.lines(text)), options: ImportOptions(batch: 5))
      #expect(try Self.export(store) == Self.export(whole), "cut at \(cut)")
      #expect(resumed.resumed != nil || cut < 5)
      let again = try store.importObjects(
        from: JSONLinesInput(bytes: Self.lines(text)), options: ImportOptions(batch: 3))
      #expect(again.alreadyImported && again.commits.isEmpty)
      #expect(try store.verify().isOK)
    }
  }

  @Test(
    "a bad line chunks of lines after the first is refused when the commits reach it: the batches before it land, and the fixed file resumes after them"
  )
  func badLineFarIn() throws {
    // Several of the read-ahead's chunks (ImportReadAhead.chunkLines lines each), the bad
    // line in the third.
    let text = Self.forwardCompany(companies: 60, employees: 30)
    var all = text.split(separator: "\n").map(String.init)
    let bad = ImportReadAhead.chunkLines * 2 + 77
    let good = all[bad - 1]
    all[bad - 1] = #"{"id": "broken", "entity": "Employee", "attributes": {"name": 7}}"#
    let (whole, d1) = try makeStore(try Fixtures.company(), label: "whole")
    defer { removeDirectory(d1) }
    _ = try whole.importObjects(Self.lines(text), batch: 100)
    let (store, dir) = try makeStore(try Fixtures.company(), label: "bad")
    defer { removeDirectory(dir) }
    #expect {
      try store.importObjects(
        from: JSONLinesInput(bytes: Self.lines(all.joined(separator: "\n"))), options: ImportOptions(batch: 100))
    } throws: { error in
      (error as? FormatError)?.line == bad && "\(error)".contains("attributes.name")
    }
    // The batches of whole hundreds of lines before the bad one's batch stayed.
    #expect(try store.read { try $0.logEnd().commit } == UInt64((bad - 1) / 100))
    all[bad - 1] = good
    let resumed = try store.importObjects(
      from: JSONLinesInput(bytes: Self.lines(all.joined(separator: "\n"))), options: ImportOptions(batch: 100))
    #expect(resumed.resumed?.line == (bad - 1) / 100 * 100)
    #expect(try Self.export(store) == Self.export(whole))
  }

  @Test("a rerun whose committed lines differ is refused, and an export needs --new-identities in a used store")
  func refusedReruns() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let first = """
      {"id": "a", "entity": "Employee", "attributes": {"name": "A"}}
      {"id": "b", "entity": "Employee", "attributes": {"name": "B"}}
      """
    _ = try store.importObjects(from: JSONLinesInput(bytes: Self.lines(first)), options: ImportOptions(batch: 1))
    let changed = first.replacingOccurrences(of: "\"B\"", with: "\"C\"")
    #expect {
      _ = try store.importObjects(from: JSONLinesInput(bytes: Self.lines(changed)))
    } throws: { "\($0)".contains("stopped after line 2") }
    var exported = ""
    try store.export { exported += $0 + "\n" }
    #expect {
      _ = try store.importObjects(from: JSONLinesInput(bytes: Self.lines(exported)))
    } throws: { "\($0)".contains("line 1: id: 'Employee/1' is a store identity") }
    let again = try store.importObjects(
      from: JSONLinesInput(bytes: Self.lines(exported)), options: ImportOptions(newIdentities: true))
    #expect(again.objects == 2)
    #expect(try store.read { try $0.objects(of: "Employee").count } == 4)
  }

  @Test("JSONLinesInput gives the same lines, numbers and hash whatever the chunking")
  func chunkedInput() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    var g = SeededGenerator(seed: 5)
    var text = ""
    for i in 0..<3000 {
      text += g.chance(0.1) ? "\n" : "{\"n\": \(i), \"pad\": \"\(String(repeating: "x", count: g.int(0...2000)))\"}\r\n"
    }
    let path = dir + "/in.jsonl"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let memory = JSONLinesInput(bytes: Array(text.utf8))
    let file = try JSONLinesInput(path: path)
    var count = 0
    while let a = try memory.next() {
      let b = try #require(try file.next())
      #expect(a.number == b.number && a.bytes.elementsEqual(b.bytes))
      count += 1
    }
    #expect(try file.next() == nil)
    #expect(memory.hash == file.hash && memory.consumed == file.consumed && file.consumed == text.utf8.count)
    #expect(count > 2500)
  }
}
