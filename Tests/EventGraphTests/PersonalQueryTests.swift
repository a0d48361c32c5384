import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// Queries over personal attributes (Docs/privacy.md): an equality or `IN` served by the
/// blind index, everything else by a scan that decrypts; the answers those of the same
/// store without personal attributes.
private typealias Sort = EventGraph.SortDescriptor

/// A person read as a typed record, with the required personal `code`.
struct PersonRecord: Record, Equatable {
  static let entityName = "Person"
  var name: String?
  var email: String?
  var age: Int64?
  var code: String
}

/// The same person without the required personal value.
struct LenientPersonRecord: Record, Equatable {
  static let entityName = "Person"
  var name: String?
  var email: String?
  var age: Int64?
}

@Suite("Queries over personal values: blind index and decrypting scans")
struct PersonalQueryTests {
  /// A person with an indexed name and a unique e-mail, personal or not.
  static func model(personal: Bool) throws -> Model {
    try Model(
      name: "People", version: 1,
      entities: [
        EntityDescription(
          name: "Person",
          attributes: [
            AttributeDescription(name: "name", type: .string, isOptional: true, isIndexed: true, isPersonal: personal),
            AttributeDescription(name: "email", type: .string, isOptional: true, isPersonal: personal),
            AttributeDescription(name: "age", type: .int64, isOptional: true, isIndexed: true),
            // Required: erased, a typed record's non-optional property cannot take it.
            AttributeDescription(name: "code", type: .string, defaultValue: .string("-"), isPersonal: personal),
          ],
          uniquenessConstraints: [["email"]])
      ])
  }

  /// Two stores with the same people, one with `name` and `email` personal, in which the
  /// people `erased` (by index) are erased; in the plain store their values are removed.
  static func stores(_ dir: String, seed: UInt64, count: Int) throws -> (plain: EventStore, personal: EventStore) {
    var g = SeededGenerator(seed: seed)
    let key = dir + "/people.key"
    try EventStore.generateKeyFile(at: key)
    let plain = try EventStore.create(at: dir + "/plain", model: try model(personal: false))
    let personal = try EventStore.create(
      at: dir + "/personal", model: try model(personal: true), options: StoreOptions(keyFile: key))
    let names = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Ken", "Anna", "Ada "]
    var people: [(name: Value?, email: Value, age: Value?)] = []
    for i in 0..<count {
      let name: Value? = g.chance(0.9) ? .string(g.pick(names)) : nil
      let age: Value? = g.chance(0.8) ? .int64(Int64(g.int(18...80))) : nil
      people.append((name, .string("p\(i)@example.org"), age))
    }
    var erased: [Int] = []
    for store in [plain, personal] {
      let ids = try #require(
        store.write { tx in
          try people.map { try tx.insert("Person", ["name": $0.name, "email": $0.email, "age": $0.age]) }
        }.value)
      if erased.isEmpty { erased = ids.indices.filter { _ in g.chance(0.2) } }
      try store.write { tx in
        for i in erased {
          if store === personal {
            _ = try tx.erase(ids[i])
          } else {
            try tx.set(ids[i], "name", nil)
            try tx.set(ids[i], "email", nil)
          }
        }
      }
    }
    return (plain, personal)
  }

  @Test(
    "every query over personal values gives what the same query gives on the plain store, erased values reading as none",
    arguments: stressSeeds([1, 2, 3]))
  func sameAnswers(seed: UInt64) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (plain, personal) = try Self.stores(dir, seed: seed, count: 300)
    typealias Query = (predicate: String?, sort: [Sort], limit: Int?, index: String?)
    let queries: [Query] = [
      ("name == 'Ada'", [], nil, "name"),
      ("name IN {'Grace', 'Ken', 'Nobody'}", [], nil, "name"),
      ("name == 'Ada' OR age > 70", [], nil, "name, age"),
      ("name == 'Ada' AND age >= 40", [], nil, "name"),
      ("name BEGINSWITH 'A'", [], nil, nil),
      ("name > 'B' AND name < 'G'", [], nil, nil),
      ("name == nil", [], nil, nil),
      ("email == 'p7@example.org'", [], nil, nil),
      ("age > 30", [Sort("name")], 25, "age"),
      (nil, [Sort("name", ascending: false)], 40, nil),
      ("name CONTAINS[c] 'a'", [Sort("name"), Sort("age")], nil, nil),
    ]
    for (predicate, sort, limit, index) in queries {
      let expected = try plain.read { try $0.fetch("Person", where: predicate, sortedBy: sort, limit: limit) }
      let found = try personal.read { try $0.fetch("Person", where: predicate, sortedBy: sort, limit: limit) }
      #expect(found.objects == expected.objects, "\(predicate ?? "all") sorted by \(sort.map(\.key))")
      #expect(found.index == index, "\(predicate ?? "all"): the index of a personal attribute only for == and IN")
    }
  }

  @Test(
    "a unique personal attribute is kept unique through its blind hash; an erasure takes the subject's values out of the indexes"
  )
  func uniqueness() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (_, personal) = try Self.stores(dir, seed: 9, count: 20)
    let ada = try personal.write { tx in
      try tx.insert("Person", ["name": .string("Ada"), "email": .string("ada@example.org")])
    }.value!
    do {
      _ = try personal.write { tx in try tx.insert("Person", ["email": .string("ada@example.org")]) }
      Issue.record("a second person took a personal unique value")
    } catch let e as StoreError {
      #expect(e.code == .notUnique)
    }
    #expect(try personal.read { try $0.fetch("Person", where: "email == 'ada@example.org'").objects } == [ada])
    #expect(try personal.read { try $0.fetch("Person", where: "name == 'Ada'").objects }.contains(ada))
    _ = try personal.write { tx in try tx.erase(ada) }
    // The index no longer finds the erased person by a guess of their values...
    try personal.read { s in
      let byName = try s.fetch("Person", where: "name == 'Ada'")
      #expect(!byName.objects.contains(ada))
      #expect(byName.examined == byName.objects.count, "an erased value's blind hash is still in the index")
    }
    // ...and the value is free for someone else.
    let again = try personal.write { tx in try tx.insert("Person", ["email": .string("ada@example.org")]) }.value!
    #expect(try personal.read { try $0.fetch("Person", where: "email == 'ada@example.org'").objects } == [again])
    #expect(try personal.verify().isOK)
  }

  @Test("without the key a query that reads personal values is refused; one that does not is answered")
  func withoutTheKey() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let expected = try {
      let (plain, _) = try Self.stores(dir, seed: 4, count: 50)
      return try plain.read { try $0.fetch("Person", where: "age > 40").objects }
    }()
    let locked = try EventStore(path: dir + "/personal", options: StoreOptions(readOnly: true))
    #expect(try locked.read { try $0.fetch("Person", where: "age > 40").objects } == expected)
    for (predicate, sort) in [("name == 'Ada'", [Sort]()), ("age > 40", [Sort("name")])] {
      do {
        _ = try locked.read { try $0.fetch("Person", where: predicate, sortedBy: sort) }
        Issue.record("\(predicate) was answered without the key")
      } catch let e as StoreError {
        #expect(e.code == .keyRequired)
      }
    }
  }

  @Test(
    "a typed record opens personal values; erased, an optional property reads nil and a required one is a clear error; without the key, an error"
  )
  func records() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let alan = try {
      let (_, personal) = try Self.stores(dir, seed: 5, count: 5)
      let (ada, alan) = try personal.write { tx in
        (
          try tx.insert(
            "Person",
            ["name": .string("Ada"), "email": .string("ada@example.org"), "age": .int64(36), "code": .string("A1")]),
          try tx.insert(
            "Person", ["name": .string("Alan"), "email": .string("alan@example.org"), "code": .string("A2")])
        )
      }.value!
      #expect(
        try personal.read { try $0.record(PersonRecord.self, ada)?.record }
          == PersonRecord(name: "Ada", email: "ada@example.org", age: 36, code: "A1"))
      let fetched = try personal.read { try $0.fetch(PersonRecord.self, where: "name == 'Alan'") }
      #expect(fetched.map(\.record) == [PersonRecord(name: "Alan", email: "alan@example.org", age: nil, code: "A2")])
      _ = try personal.write { tx in try tx.erase(ada) }
      #expect(
        try personal.read { try $0.record(LenientPersonRecord.self, ada)?.record }
          == LenientPersonRecord(name: nil, email: nil, age: 36))
      do {
        _ = try personal.read { try $0.record(PersonRecord.self, ada) }
        Issue.record("an erased required value was decoded")
      } catch let e as RecordError {
        #expect(e.property == "code")
        #expect(e.description.contains("erased"))
        #expect(e.code == .erasedValue)
      }
      return alan
    }()
    let locked = try EventStore(path: dir + "/personal", options: StoreOptions(readOnly: true))
    do {
      _ = try locked.read { try $0.record(LenientPersonRecord.self, alan) }
      Issue.record("a personal value was decoded without the key")
    } catch let e as RecordError {
      #expect(e.description.contains("without its key"))
      #expect(e.code == .keyRequired)
    }
  }
}
