import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// A fetch sorted by an indexed attribute, with a limit, reads the index in order (forwards
/// or backwards, one range per entity) and stops when its page is full; it returns what
/// sorting every match returns.
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
            AttributeDescription(name: "isbn", type: .int64, isIndexed: true),
            AttributeDescription(name: "price", type: .decimal, isIndexed: true),
            AttributeDescription(name: "weight", type: .float, isOptional: true, isIndexed: true),
          ]),
        EntityDescription(
          name: "Ebook", parent: "Book", attributes: [AttributeDescription(name: "format", type: .string)]),
      ])
  }

  static let titles = ["桃", "太郎", "Émile", "emile", "e\u{301}mile", "apple", "Apple", "banana", "", "zz", "a", "b"]

  /// The page sorting every match gives: the reference.
  static func sorted(_ s: Snapshot, _ sort: EventGraph.SortDescriptor, _ predicate: String?, limit: Int, offset: Int)
    throws -> [ObjectID]
  {
    let e = try #require(s.model.entity(named: "Book"))
    let compiled = try predicate.map { try CompiledPredicate.compile($0, entity: e.id, model: s.model) }
    let source = ProjectionSource(reader: s.reader)
    let matches = try s.objects(of: e.id).filter { try compiled?.evaluate($0, in: source) ?? true }
    let keyed = try matches.map { ($0, try s.value($0, sort.key)) }
    let order = keyed.sorted { a, b in
      let c = ValueOrder.compare(a.1, b.1)
      return c != 0 ? (sort.ascending ? c < 0 : c > 0) : a.0 < b.0
    }
    return Array(order.map(\.0).dropFirst(offset).prefix(limit))
  }

  /// Books (and a fifth of them e-books, a sub-entity) with random values; `isbn` holds
  /// integers beyond 2^53 that one double cannot tell apart, as the sort compares them.
  static func fill(_ store: EventStore, _ g: inout SeededGenerator, count: Int) throws {
    try store.write { tx in
      for _ in 0..<count {
        let ebook = g.chance(0.2)
        let isbn = g.chance(0.5) ? Int64(g.int(-30...30)) : (1 << 60) + Int64(g.int(0...3)) * (1 << 6)
        let o = try tx.insert(
          ebook ? "Ebook" : "Book",
          [
            "title": .string(g.pick(Self.titles) + (g.chance(0.3) ? "\(g.int(0...9))" : "")),
            "pages": .int32(Int32(g.int(-5...40))), "score": .double(Double(g.int(-20...20)) / 4),
            "released": .date(Date(timeIntervalSince1970: Double(g.int(0...50)) * 86_400)),
            "tag": g.chance(0.5) ? .string("t\(g.int(0...2))") : nil,
            "rank": g.chance(0.7) ? .int16(Int16(g.int(-3...12))) : nil,
            "isbn": .int64(isbn), "price": .decimal(Decimal(g.int(-40...40)) / 8),
            "weight": g.chance(0.8) ? .float(Float(g.int(0...20)) / 2) : nil,
          ])
        if ebook { try tx.set(o, "format", .string("epub")) }
      }
    }
  }

  @Test(
    "for random data, keys, directions, predicates, limits and offsets: the page a full sort gives",
    arguments: [31, 32, 33] as [UInt64])
  func pagesEqualFullSort(seed: UInt64) throws {
    var g = SeededGenerator(seed: seed)
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try Self.fill(store, &g, count: 300)
    var served = 0
    var servedDescending = 0
    var servedOptional = 0
    try store.read { s throws in
      for _ in 0..<300 {
        let key = g.pick(["title", "pages", "score", "released", "rank", "isbn", "price", "weight"])
        let ascending = g.chance(0.5)
        let predicate: String? = g.pick([nil, "tag == 't1'", "tag != nil", "pages > 10", "title BEGINSWITH[c] 'e'"])
        let (limit, offset) = (g.int(0...25), g.chance(0.5) ? 0 : g.int(0...30))
        let sort = EventGraph.SortDescriptor(key, ascending: ascending)
        let r = try s.fetch("Book", where: predicate, sortedBy: [sort], limit: limit, offset: offset)
        let expected = try Self.sorted(s, sort, predicate, limit: limit, offset: offset)
        #expect(r.objects == expected, "\(key) \(ascending) \(predicate ?? "-") \(limit) \(offset)")
        if r.index == key {
          served += 1
          if !ascending { servedDescending += 1 }
          if ["rank", "weight"].contains(key) { servedOptional += 1 }
          // Each of the two entities' ranges gives at most the page.
          if predicate == nil { #expect(r.examined <= 2 * (offset + limit)) }
        }
      }
    }
    #expect(served > 80 && servedDescending > 30 && servedOptional > 10)
  }

  @Test(
    "the page of the e-books alone, a sub-entity's own range, examines at most the page",
    arguments: [true, false])
  func subEntityPage(ascending: Bool) throws {
    var g = SeededGenerator(seed: 34)
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try Self.fill(store, &g, count: 200)
    try store.read { s throws in
      for key in ["isbn", "price", "title", "weight"] {
        let sort = EventGraph.SortDescriptor(key, ascending: ascending)
        let r = try s.fetch("Ebook", sortedBy: [sort], limit: 5, offset: 2)
        let e = try #require(s.model.entity(named: "Ebook"))
        let all = try s.objects(of: e.id).map { ($0, try s.value($0, key)) }.sorted { a, b in
          let c = ValueOrder.compare(a.1, b.1)
          return c != 0 ? (ascending ? c < 0 : c > 0) : a.0 < b.0
        }
        if key == "weight" && ascending {
          #expect(r.index == nil, "an optional attribute ascending: objects without a value come first")
        } else {
          #expect(r.index == key && r.examined <= 7, "\(key)")
        }
        #expect(r.objects == Array(all.map(\.0).dropFirst(2).prefix(5)), "\(key)")
      }
    }
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
            "released": .date(Date(timeIntervalSince1970: 0)), "isbn": .int64(Int64(i)), "price": .decimal(1),
          ])
      }
    }
    let ten = try store.fetch("Book", sortedBy: [EventGraph.SortDescriptor("title")], limit: 10)
    #expect(ten.index == "title" && ten.examined == 10 && ten.objects.count == 10)
    // The largest limit with an offset: every match after the offset, no overflow.
    let rest = try store.fetch("Book", sortedBy: [EventGraph.SortDescriptor("title")], limit: .max, offset: 195)
    #expect(rest.index == "title" && rest.objects.count == 5)
    let last = try store.fetch("Book", sortedBy: [EventGraph.SortDescriptor("isbn", ascending: false)], limit: 10)
    #expect(last.index == "isbn" && last.examined == 10)
    #expect(
      try store.read { s in try last.objects.map { try s.value($0, "isbn") } }
        == (190..<200).reversed().map { .int64(Int64($0)) })
    // By an optional attribute ascending (objects without a value first, which the index does
    // not hold), descending when the index cannot fill the page (no book has a rank), or with
    // no limit: the full way.
    for (sort, limit) in [
      (EventGraph.SortDescriptor("rank"), 10), (EventGraph.SortDescriptor("rank", ascending: false), 10),
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
            "released": .date(Date(timeIntervalSince1970: 0)), "isbn": .int64(0), "price": .decimal(1),
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
