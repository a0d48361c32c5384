import Foundation
import Testing

@testable import EventGraph

@Suite("append: idempotency keys and expectations")
struct AppendOptionsTests {
  static let hire = """
    {"commit": "hire", "idempotencyKey": "hire-momo", "type": "insert", "object": "$momo", "entity": "AddressBook"}
    {"commit": "hire", "type": "set", "object": "$momo", "key": "firstName", "value": "桃"}
    {"commit": "hire", "type": "set", "object": "$momo", "key": "lastName", "value": "太郎"}
    {"commit": "phone", "idempotencyKey": "phone-momo", "type": "set", "object": "$momo", "key": "phone1", "value": "1"}
    """

  @Test("a rerun skips the commits whose keys landed, reports them as duplicates and keeps their placeholders")
  func duplicates() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    var landed: [AppendedCommit] = []
    let first = try store.append(from: JSONLinesInput(bytes: Array(Self.hire.utf8))) { landed.append($0) }
    #expect(first.failure == nil && landed.map(\.isDuplicate) == [false, false])
    let more =
      Self.hire + "\n" + #"{"commit": "more", "type": "set", "object": "$momo", "key": "phone2", "value": "2"}"#
    let again = try store.append(Array(more.utf8))
    #expect(again.failure == nil)
    #expect(again.commits.map(\.isDuplicate) == [true, true, false])
    #expect(again.commits[0].commit == first.commits[0].commit)
    #expect(again.placeholders.map(\.id) == first.placeholders.map(\.id))
    #expect(try store.read { try $0.objects(of: "AddressBook").count } == 1)
    #expect(try store.lastSequence() == 5)
  }

  @Test("a refused commit names the objects it inserted by their placeholders and lines, not by identities")
  func refusalNamesPlaceholders() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    // Both names are required: the commit is refused at its end, on an object it inserted.
    let text = """
      {"commit": "a", "type": "insert", "object": "$first", "entity": "AddressBook"}
      {"commit": "a", "type": "set", "object": "$first", "key": "firstName", "value": "Momo"}
      {"commit": "a", "type": "set", "object": "$first", "key": "lastName", "value": "Taro"}
      {"commit": "a", "type": "insert", "object": "$second", "entity": "AddressBook"}
      {"commit": "a", "type": "set", "object": "$second", "key": "firstName", "value": "Kin"}
      """
    let r = try store.append(Array(text.utf8))
    let failure = try #require(r.failure)
    #expect(failure.description.contains("commit 'a' refused: AddressBook $second (line 4).lastName: "), "\(failure)")
    #expect(!failure.description.contains("AddressBook/"), "\(failure)")
    #expect(try store.lastSequence() == 0)
  }

  @Test("a key committed with other inserts is refused, not mapped to the wrong objects")
  func keyReusedForOtherContent() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    _ = try store.append(Array(Self.hire.utf8))
    let other = """
      {"commit": "x", "idempotencyKey": "hire-momo", "type": "insert", "object": "$a", "entity": "AddressBook"}
      {"commit": "x", "type": "insert", "object": "$b", "entity": "AddressBook"}
      """
    let r = try store.append(Array(other.utf8))
    #expect(r.failure?.description.contains("not the same commit") == true)
  }

  @Test(
    "expectations on an object's version and on the log's end refuse a commit that no longer holds them",
    arguments: [
      (#"{"AddressBook/1": 1}"#, nil),
      (#"{"AddressBook/1": 0}"#, "AddressBook/1 moved: the commit expected version 0, but its last commit is now at 1"),
      (
        #"{"AddressBook/1": 9}"#,
        "AddressBook/1 is at version 1: the commit expected version 9, which it has not reached"
      ),
      (#"{"logEnd": 3}"#, nil),
      (#"{"logEnd": 2}"#, "the log moved: the commit expected it to end at 2, but it now ends at 3"),
      (#"{"logEnd": 30}"#, "the log ends at 3: the commit expected it to end at 30, which it has not reached"),
      (#"{"AddressBook/7": 1}"#, "expect.AddressBook/7: no object AddressBook/7"),
      (#"{"AddressBook/1": -1}"#, "expect.AddressBook/1: a version is an integer, 0 or more"),
      (#"[1]"#, "line 1: expect: expected an object of versions"),
    ] as [(String, String?)])
  func expectations(_ expect: String, _ refusal: String?) throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    let hireOnly = Self.hire.split(separator: "\n").prefix(3).joined(separator: "\n")
    _ = try store.append(Array(hireOnly.utf8))
    let line =
      #"{"commit": "c", "expect": \#(expect), "type": "set", "object": "AddressBook/1", "key": "phone1", "value": "9"}"#
    let r = try store.append(Array(line.utf8))
    if let refusal {
      #expect(r.failure?.description.contains(refusal) == true, "\(r.failure?.description ?? "landed")")
      #expect(try store.lastSequence() == 3)
    } else {
      #expect(r.failure == nil)
      #expect(try store.lastSequence() == 4)
    }
  }

  @Test("expect and idempotencyKey only on a commit's first line")
  func firstLineOnly() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    let text = """
      {"commit": "c", "type": "insert", "object": "$a", "entity": "AddressBook"}
      {"commit": "c", "idempotencyKey": "k", "type": "set", "object": "$a", "key": "firstName", "value": "a"}
      """
    let r = try store.append(Array(text.utf8))
    #expect(
      r.failure?.description == "line 2: idempotencyKey: only the first line of a commit may carry 'idempotencyKey'")
    #expect(try store.lastSequence() == 0)
  }

  @Test("Transaction.require checks in the synchronous write what commit(expecting:) checks in the writer")
  func transactionRequire() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    let id = try store.write { tx in
      try tx.insert("AddressBook", ["firstName": .string("a"), "lastName": .string("b")])
    }.value!
    let version = try store.read { try $0.version(of: id) }
    try store.write { tx in
      try tx.require([.object(id, version: version), .logEnd(version + 2)])
      try tx.set(id, "phone1", .string("1"))
    }
    #expect(
      throws: ConflictError(subject: .object(id, name: "AddressBook/\(id.rawValue)"), expected: version, actual: 4)
    ) {
      try store.write { tx in
        try tx.require([.object(id, version: version)])
        try tx.set(id, "phone1", .string("2"))
      }
    }
  }
}
