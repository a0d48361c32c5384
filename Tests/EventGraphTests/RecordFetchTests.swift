import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// FetchTests' Item as a record (its sub-entity Special's objects read as Items too).
struct ItemRecord: Record, Equatable {
  static let entityName = "Item"
  var name: String
  var age: Int64?
  var score: Double?
  var flag: Bool?
  var tag: String?
}

@Suite("Records: a typed fetch agrees with the dynamic fetch")
struct RecordFetchTests {
  static func randomSort(_ g: inout SeededGenerator) -> [EventGraph.SortDescriptor] {
    let keys = ["name", "age", "score", "flag", "tag"]
    return (0..<g.int(0...2)).map { _ in EventGraph.SortDescriptor(g.pick(keys), ascending: g.chance(0.5)) }
  }

  @Test("for random predicates, sorts and limits over random objects, the same objects and values")
  func agreesWithDynamicFetch() throws {
    for seed in stressSeeds([11, 12, 13]) {
      let (store, dir) = try makeStore(try FetchTests.model())
      defer { removeDirectory(dir) }
      try FetchTests.fill(store, seed: seed, count: 150)
      var g = SeededGenerator(seed: seed &* 31)
      try store.read { s throws in
        for _ in 0..<40 {
          let predicate = g.chance(0.1) ? nil : FetchTests.randomPredicate(&g)
          let sort = Self.randomSort(&g)
          let limit = g.chance(0.5) ? g.int(0...20) : nil
          let offset = g.chance(0.3) ? g.int(0...10) : 0
          let dynamic = try s.fetch("Item", where: predicate, sortedBy: sort, limit: limit, offset: offset)
          let typed = try s.fetch(ItemRecord.self, where: predicate, sortedBy: sort, limit: limit, offset: offset)
          #expect(typed.map(\.id.id) == dynamic.objects, "seed \(seed): \(predicate ?? "all")")
          for record in typed {
            let o = record.id.id
            #expect(try s.value(o, "name") == .string(record.name))
            #expect(try s.value(o, "age") == record.age.map { .int64($0) })
            #expect(try s.value(o, "score") == record.score.map { .double($0) })
            #expect(try s.value(o, "flag") == record.flag.map { .boolean($0) })
            #expect(try s.value(o, "tag") == record.tag.map { .string($0) })
            #expect(record.version == (try s.history(of: o).last))
          }
        }
      }
    }
  }

  @Test("a fetch binds variables as the dynamic fetch does")
  func variables() throws {
    let (store, dir) = try makeStore(try FetchTests.model())
    defer { removeDirectory(dir) }
    try FetchTests.fill(store, seed: 3, count: 60)
    try store.read { s throws in
      let typed = try s.fetch(ItemRecord.self, where: "age >= $min", variables: ["min": .int64(10)])
      let dynamic = try s.fetch("Item", where: "age >= $min", variables: ["min": .int64(10)])
      #expect(typed.map(\.id.id) == dynamic.objects)
      #expect(!typed.isEmpty)
      #expect(typed.allSatisfy { ($0.age ?? 0) >= 10 })
    }
  }
}
