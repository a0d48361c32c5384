import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// ``ItemRecord`` read by position, as the types `eventtool codegen` writes are.
struct ItemByPosition: Record, Equatable {
  static let entityName = "Item"
  var name: String
  var age: Int64?
  var score: Double?
  var flag: Bool?
  var tag: String?

  init(reading values: RecordValues) throws {
    name = try values.value(0)
    age = try values.optional(1)
    score = try values.optional(2)
    flag = try values.optional(3)
    tag = try values.optional(4)
  }
}

/// An `init(reading:)` that reads a position the record does not have.
struct ItemPastTheEnd: Record {
  static let entityName = "Item"
  var name: String

  init(reading values: RecordValues) throws {
    name = try values.value(0)
    let _: String = try values.value(1)
  }
}

/// An `init(reading:)` that reads the name as a number.
struct ItemWrongType: Record {
  static let entityName = "Item"
  var name: String

  init(reading values: RecordValues) throws {
    let n: Int64 = try values.value(0)
    name = "\(n)"
  }
}

@Suite("Records: init(reading:) reads by position what the Codable path reads")
struct RecordReadingTests {
  @Test("for random predicates and sorts, the same records as through init(from:)")
  func agreesWithCodable() throws {
    for seed in stressSeeds([21, 22]) {
      let (store, dir) = try makeStore(try FetchTests.model())
      defer { removeDirectory(dir) }
      try FetchTests.fill(store, seed: seed, count: 150)
      var g = SeededGenerator(seed: seed &* 7)
      try store.read { s throws in
        for _ in 0..<30 {
          let predicate = g.chance(0.1) ? nil : FetchTests.randomPredicate(&g)
          let sort = RecordFetchTests.randomSort(&g)
          let codable = try s.fetch(ItemRecord.self, where: predicate, sortedBy: sort)
          let positional = try s.fetch(ItemByPosition.self, where: predicate, sortedBy: sort)
          #expect(positional.map(\.id.id) == codable.map(\.id.id), "seed \(seed): \(predicate ?? "all")")
          #expect(positional.map(\.version) == codable.map(\.version))
          for (p, c) in zip(positional, codable) {
            #expect(p.name == c.name && p.age == c.age && p.score == c.score && p.flag == c.flag && p.tag == c.tag)
          }
        }
      }
    }
  }

  @Test("a read past the record's properties or of another type is a RecordError")
  func badReads() throws {
    let (store, dir) = try makeStore(try FetchTests.model())
    defer { removeDirectory(dir) }
    try FetchTests.fill(store, seed: 5, count: 10)
    #expect(throws: RecordError.self) { try store.fetch(ItemPastTheEnd.self) }
    #expect(throws: RecordError.self) { try store.fetch(ItemWrongType.self) }
    #expect(try store.fetch(ItemByPosition.self).count == (try store.read { try $0.fetch("Item").objects.count }))
  }
}
