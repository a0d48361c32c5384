import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("Fetch: predicates, sorting, and the attribute index")
struct FetchTests {
  static func model() throws -> Model {
    try Model(
      name: "Shop", version: 1,
      entities: [
        EntityDescription(
          name: "Item",
          attributes: [
            AttributeDescription(name: "name", type: .string, isIndexed: true),
            AttributeDescription(name: "age", type: .int64, isOptional: true, isIndexed: true),
            AttributeDescription(name: "score", type: .double, isOptional: true, isIndexed: true),
            AttributeDescription(name: "flag", type: .boolean, isOptional: true, isIndexed: true),
            AttributeDescription(name: "tag", type: .string, isOptional: true),
          ]),
        EntityDescription(
          name: "Special", parent: "Item",
          attributes: [AttributeDescription(name: "extra", type: .int16, isOptional: true)]),
      ])
  }

  static let names = ["桃", "太郎", "Émile", "emile", "e\u{301}mile", "apple", "Apple", "banana", "", "zz"]

  static func fill(_ store: EventStore, seed: UInt64, count: Int) throws {
    var g = SeededGenerator(seed: seed)
    try store.write { tx in
      for _ in 0..<count {
        let entity = g.next() % 5 == 0 ? "Special" : "Item"
        let o = try tx.insert(entity, ["name": .string(names[Int(g.next() % UInt64(names.count))])])
        if g.next() % 4 != 0 { try tx.set(o, "age", .int64(Int64(g.next() % 40) - 10)) }
        if g.next() % 3 != 0 { try tx.set(o, "score", .double(Double(Int64(g.next() % 200) - 100) / 4)) }
        if g.next() % 2 == 0 { try tx.set(o, "flag", .boolean(g.next() % 2 == 0)) }
        try tx.set(o, "tag", .string("t\(g.next() % 3)"))
      }
    }
    // Some changes and deletes, so the index must follow updates.
    try store.write { tx in
      for o in try tx.objects(of: "Item") where g.next() % 7 == 0 {
        if g.next() % 2 == 0 { try tx.delete(o) } else { try tx.set(o, "age", .int64(Int64(g.next() % 40))) }
      }
    }
  }

  static func randomPredicate(_ g: inout SeededGenerator) -> String {
    func clause() -> String {
      switch g.next() % 11 {
      case 0: return "age == \(Int64(g.next() % 40) - 10)"
      case 1: return "age >= \(Int64(g.next() % 40) - 10)"
      case 2: return "\(Int64(g.next() % 40)) > age"
      case 3: return "age BETWEEN {\(g.next() % 10), \(10 + g.next() % 20)}"
      case 4: return "name == '\(names[Int(g.next() % UInt64(names.count))])'"
      case 5: return "name IN {'apple', 'banana', '桃', 'émile'}"
      case 6: return "score < \(Double(Int64(g.next() % 200) - 100) / 4)"
      case 7: return "flag == \(g.next() % 2 == 0 ? "TRUE" : "FALSE")"
      case 8: return "tag == 't\(g.next() % 3)'"
      case 9:
        let prefixes = ["", "a", "ap", "Ap", "é", "e\u{301}", "e", "émi", "桃", "太", "b", "zz", "zzz", "\u{301}"]
        return "name BEGINSWITH '\(prefixes[Int(g.next() % UInt64(prefixes.count))])'"
      default: return "name > '\(names[Int(g.next() % UInt64(names.count))])'"
      }
    }
    switch g.next() % 4 {
    case 0: return clause()
    case 1: return "\(clause()) AND \(clause())"
    case 2: return "\(clause()) OR \(clause())"
    default: return "\(clause()) AND NOT (\(clause()))"
    }
  }

  @Test("for random predicates over random objects, an indexed fetch returns what a full scan returns")
  func indexEqualsScan() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try Self.fill(store, seed: 21, count: 400)
    var g = SeededGenerator(seed: 22)
    let usedIndex = try Self.fetchesEqualScans(store, count: 300) { (Self.randomPredicate(&g), [:]) }
    #expect(usedIndex > 100)
    #expect(try store.verify().isOK)  // the index is a projection too: replay rebuilds it exactly
  }

  /// Fetches `count` predicates of Items with their variables, each against evaluating it
  /// on every Item; how many fetches an index served.
  static func fetchesEqualScans(
    _ store: EventStore, count: Int, _ next: () -> (String, [String: Value])
  ) throws -> Int {
    var usedIndex = 0
    try store.read { s throws in
      let item = try #require(s.model.entity(named: "Item"))
      for _ in 0..<count {
        let (text, variables) = next()
        let fetched = try s.fetch("Item", where: text, variables: variables)
        if fetched.index != nil { usedIndex += 1 }
        let compiled = try CompiledPredicate.compile(
          text, entity: item.id, model: s.model, variables: variables.mapValues { .value($0.type) })
        let source = ProjectionSource(reader: s.reader)
        let bindings = variables.mapValues { QueryVariable<ObjectID>.value($0) }
        let scanned = try s.objects(of: item.id).filter { try compiled.evaluate($0, in: source, variables: bindings) }
        #expect(fetched.objects == scanned, "\(text) \(variables)")
      }
    }
    return usedIndex
  }

  @Test("BEGINSWITH on an indexed string reads only the prefix's range of the index")
  func beginsWithUsesIndex() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try Self.fill(store, seed: 5, count: 300)
    let long = String(repeating: "a", count: 300)
    try store.write { tx in
      for tail in ["b", "c"] { _ = try tx.insert("Item", ["name": .string(long + tail)]) }
    }
    let r = try store.fetch("Item", where: "name BEGINSWITH 'ap'")
    #expect(r.index == "name")
    #expect(!r.objects.isEmpty && r.examined == r.objects.count)
    // Past the index's 256 bytes a key is cut: the range gives both long names, the
    // predicate keeps one.
    let cut = try store.fetch("Item", where: "name BEGINSWITH '\(long)b'")
    #expect(cut.index == "name" && cut.objects.count == 1 && cut.examined == 2)
    // With [c] the index cannot serve it (folded case): a scan.
    #expect(try store.fetch("Item", where: "name BEGINSWITH[c] 'ap'").index == nil)
  }

  @Test("an OR whose every clause an index serves reads the union of their ranges")
  func orUsesUnion() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try Self.fill(store, seed: 5, count: 300)
    let r = try store.fetch("Item", where: "name == 'apple' OR age == 3 OR name BEGINSWITH 'ba'")
    #expect(r.index == "name, age")
    #expect(!r.objects.isEmpty && r.examined == r.objects.count)
    let all = try store.fetch("Item").objects.count
    #expect(r.examined < all)
    // One clause no index serves: a scan. Inside an AND, the union competes with the rest.
    #expect(try store.fetch("Item", where: "name == 'apple' OR tag == 't1'").index == nil)
    #expect(try store.fetch("Item", where: "(name == 'apple' OR age == 3) AND flag == TRUE").index == "flag")
    #expect(try store.fetch("Item", where: "(name == 'apple' OR age == 3) AND tag == 't1'").index == "name, age")
  }

  @Test("an equality on an indexed attribute examines only the matching objects")
  func equalityUsesIndex() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try Self.fill(store, seed: 5, count: 300)
    let r = try store.fetch("Item", where: "name == 'banana'")
    #expect(r.index == "name")
    #expect(r.examined == r.objects.count)
    let scan = try store.fetch("Item", where: "tag == 't1'")
    #expect(scan.index == nil)
    // Canonically equal strings are one index entry: é composed and decomposed.
    let composed = try store.fetch("Item", where: "name == 'émile'")
    let decomposed = try store.fetch("Item", where: "name == 'e\u{301}mile'")
    #expect(composed.objects == decomposed.objects)
    #expect(!composed.objects.isEmpty)
  }

  @Test("sorting, limit and offset")
  func sortLimitOffset() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try Self.fill(store, seed: 9, count: 200)
    let all = try store.fetch(
      "Item", where: "age != nil", sortedBy: [SortDescriptor("age", ascending: false), SortDescriptor("name")])
    let ages = try store.read { s in try all.objects.map { try s.value($0, "age")?.integerValue ?? 0 } }
    #expect(ages == ages.sorted(by: >))
    let page = try store.fetch(
      "Item", where: "age != nil", sortedBy: [SortDescriptor("age", ascending: false), SortDescriptor("name")],
      limit: 7, offset: 5)
    #expect(page.objects == Array(all.objects.dropFirst(5).prefix(7)))
    #expect(SortDescriptor(parsing: "-age") == SortDescriptor("age", ascending: false))
    #expect(SortDescriptor(parsing: "age sideways") == nil)
  }

  @Test("a bad predicate or sort key is refused with its position or name")
  func badInput() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    #expect(throws: QueryError.self) { _ = try store.fetch("Item", where: "agee == 3") }
    #expect(throws: QueryError.self) { _ = try store.fetch("Item", where: "name == ") }
    #expect(throws: StoreError.self) { _ = try store.fetch("Item", sortedBy: [SortDescriptor("nope")]) }
    #expect(throws: StoreError.self) { _ = try store.fetch("Nothing") }
  }

  @Test(
    "index keys sort as their values",
    arguments: [
      [Value.int64(-5), .int64(-1), .int64(0), .int64(3), .int64(Int64.max)],
      [Value.double(-2.5), .double(-0.0), .double(0.5), .double(1e300)],
      [Value.string(""), .string("a"), .string("a\u{0}b"), .string("ab"), .string("b")],
    ])
  func indexOrder(_ values: [Value]) {
    let keys = values.map(IndexKey.encode)
    #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) })
  }
}
