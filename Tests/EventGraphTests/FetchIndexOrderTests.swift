import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// A fetch sorted by a required indexed attribute, with a limit, reads the index in order
/// and stops when its page is full; it returns what sorting every match returns.
@Suite("Fetch: a limit stops early when an index gives the order")
struct FetchIndexOrderTests {
  static func model() throws -> Model {
    try Model(
      name: "Books", version: 1,
      entities: [
        EntityDescription(
          name: "Book",
          attributes: [
            AttributeDescription(name: "title", type: .string, isIndexed: true),
            AttributeDescription(name: "pages", type: .int32, isIndexed: true),
            AttributeDescription(name: "score", type: .double, isIndexed: true),
            AttributeDescription(name: "released", type: .date, isIndexed: true),
            AttributeDescription(name: "tag", type: .string, isOptional: true),
            AttributeDescription(name: "rank", type: .int16, isOptional: true, isIndexed: true),
          ])
      ])
  }

  static let titles = ["桃", "太郎", "Émile", "emile", "e\u{301}mile", "apple", "Apple", "banana", "", "zz", "a", "b"]

  /// The page sorting every match gives: the reference.
  static func sorted(_ s: Snapshot, _ key: String, _ predicate: String?, limit: Int, offset: Int) throws -> [ObjectID] {
    let e = try #require(s.model.entity(named: "Book"))
    let compiled = try predicate.map { try CompiledPredicate.compile($0, entity: e.id, model: s.model) }
    let source = ProjectionSource(reader: s.reader)
    let matches = try s.objects(of: e.id).filter { try compiled?.evaluate($0, in: source) ?? true }
    let keyed = try matches.map { ($0, try s.value($0, key)) }
    let order = keyed.sorted { a, b in
      let c = ValueOrder.compare(a.1, b.1)
      return c != 0 ? c < 0 : a.0 < b.0
    }
    return Array(order.map(\.0).dropFirst(offset).prefix(limit))
  }

  @Test(
    "for random data, keys, predicates, limits and offsets: the page a full sort gives",
    arguments: [31, 32] as [UInt64])
  func pagesEqualFullSort(seed: UInt64) throws {
    var g = SeededGenerator(seed: seed)
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try store.write { tx in
      for _ in 0..<300 {
        _ = try tx.insert(
          "Book",
          [
            "title": .string(g.pick(Self.titles) + (g.chance(0.3) ? "\(g.int(0...9))" : "")),
            "pages": .int32(Int32(g.int(-5...40))), "score": .double(Double(g.int(-20...20)) / 4),
            "released": .date(Date(timeIntervalSince1970: Double(g.int(0...50)) * 86_400)),
            "tag": g.chance(0.5) ? .string("t\(g.int(0...2))") : nil,
          ])
      }
    }
    var served = 0
    try store.read { s throws in
      for _ in 0..<150 {
        let key = g.pick(["title", "pages", "score", "released"])
        let predicate: String? = g.pick([nil, "tag == 't1'", "tag != nil", "pages > 10", "title BEGINSWITH[c] 'e'"])
        let (limit, offset) = (g.int(0...25), g.chance(0.5) ? 0 : g.int(0...30))
        let r = try s.fetch(
          "Book", where: predicate, sortedBy: [EventGraph.SortDescriptor(key)], limit: limit, offset: offset)
        let expected = try Self.sorted(s, key, predicate, limit: limit, offset: offset)
        #expect(r.objects == expected, "\(key) \(predicate ?? "-") \(limit) \(offset)")
        if r.index == key {
          served += 1
          if predicate == nil { #expect(r.examined <= offset + limit) }
        }
      }
    }
    #expect(served > 20)
  }

  @Test("--limit 10 by an indexed title examines 10 objects; what the index cannot order goes the full way")
  func examinesTen() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try store.write { tx in
      for i in 0..<200 {
        _ = try tx.insert(
          "Book",
          [
            "title": .string("t\(i)"), "pages": .int32(Int32(i)), "score": .double(0),
            "released": .date(Date(timeIntervalSince1970: 0)),
          ])
      }
    }
    let ten = try store.fetch("Book", sortedBy: [EventGraph.SortDescriptor("title")], limit: 10)
    #expect(ten.index == "title" && ten.examined == 10 && ten.objects.count == 10)
    // Descending, by an optional attribute, or with no limit: the full way.
    for (sort, limit) in [
      (EventGraph.SortDescriptor("title", ascending: false), 10), (EventGraph.SortDescriptor("rank"), 10),
    ] as [(EventGraph.SortDescriptor, Int?)]
      + [(EventGraph.SortDescriptor("title"), nil)]
    {
      let r = try store.fetch("Book", sortedBy: [sort], limit: limit)
      #expect(r.index == nil && r.examined == 200, "\(sort)")
    }
    // A title the index cuts (over 256 bytes): the index cannot order it, the full way.
    let long = String(repeating: "a", count: 300)
    try store.write { tx in
      for tail in ["z", "b"] {
        _ = try tx.insert(
          "Book",
          [
            "title": .string(long + tail), "pages": .int32(0), "score": .double(0),
            "released": .date(Date(timeIntervalSince1970: 0)),
          ])
      }
    }
    let cut = try store.fetch("Book", sortedBy: [EventGraph.SortDescriptor("title")], limit: 2)
    #expect(cut.index == nil)
    #expect(
      try store.read { s in try cut.objects.map { try s.value($0, "title") } } == [
        .string(long + "b"), .string(long + "z"),
      ])
  }
}
