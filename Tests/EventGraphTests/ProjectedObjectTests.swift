import Foundation
import LMDB
import TestSupport
import Testing

@testable import EventGraph

/// A commit keeps a stored object's record encoded and copies the entries it did not
/// change: these tests hold the records it writes to the ones a decode and an encode of
/// the whole object would write.
@Suite("Stored records changed without decoding them")
struct ProjectedObjectTests {
  /// One optional attribute of every type, one of them indexed, and a required label.
  static func model() throws -> Model {
    var attributes = AttributeType.allCases.map {
      AttributeDescription(name: "a\($0.rawValue)", type: $0, isOptional: true, isIndexed: $0 == .int64)
    }
    attributes.append(AttributeDescription(name: "label", type: .string))
    return try Model(name: "Records", version: 1, entities: [EntityDescription(name: "Thing", attributes: attributes)])
  }

  static func randomValue(_ type: AttributeType, _ g: inout SeededGenerator) -> Value {
    switch type {
    case .string:
      let text = String(repeating: g.pick(["a", "bc", "é", "日本", "🙂"]), count: g.int(0...60))
      return .string(text)
    case .int16: return .int16(Int16.random(in: .min ... .max, using: &g))
    case .int32: return .int32(Int32.random(in: .min ... .max, using: &g))
    case .int64: return .int64(Int64.random(in: .min ... .max, using: &g))
    case .double: return .double(Double.random(in: -1e12...1e12, using: &g))
    case .float: return .float(Float.random(in: -1e6...1e6, using: &g))
    case .decimal: return .decimal(Decimal(g.int(-100_000...100_000)) / 100)
    case .boolean: return .boolean(g.chance(0.5))
    case .date: return .date(Date(timeIntervalSince1970: Double(g.int(0...2_000_000_000))))
    case .binary: return .binary((0..<g.int(0...40)).map { _ in UInt8.random(in: 0...255, using: &g) })
    case .uuid:
      let b = (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }
      return .uuid(
        UUID(
          uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
    case .uri: return .uri("https://example.com/\(g.int(0...1000))")
    }
  }

  /// The `objects` record of `o` as stored.
  static func storedRecord(_ store: EventStore, _ o: ObjectID) throws -> [UInt8]? {
    try store.env.read { txn in try txn.get(store.dbs.objects, key: StoreKey.object(o)) }
  }

  @Test("commits that change some values of stored objects write the records a full decode and encode would")
  func recordsMatch() throws {
    let model = try Self.model()
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    let thing = try #require(model.entity(named: "Thing"))
    let attributes = thing.attributes
    let label = try #require(thing.attribute(named: "label"))
    for seed in UInt64(1)...UInt64(3 * stressFactor) {
      var g = SeededGenerator(seed: seed)
      var expected: [ObjectID: ObjectState] = [:]
      try store.write { tx throws in
        for _ in 0..<8 {
          let o = try tx.insert("Thing")
          var state = ObjectState(id: o, entity: thing.id, propertyCount: thing.properties.count)
          for a in attributes where a.id == label.id || g.chance(0.6) {
            let v = Self.randomValue(a.type, &g)
            try tx.set(o, a.name, v)
            state.set(a.id, v)
          }
          expected[o] = state
        }
      }
      let objects = expected.keys.sorted()
      for _ in 0..<40 {
        try store.write { tx throws in
          for _ in 0..<g.int(1...3) {
            let o = g.pick(objects)
            // Sometimes the whole state is read first, and the changes follow a decoded one.
            if g.chance(0.25) { #expect(try tx.object(o) == expected[o]) }
            for _ in 0..<g.int(1...4) {
              let a = g.pick(attributes)
              let v: Value? = a.id != label.id && g.chance(0.3) ? nil : Self.randomValue(a.type, &g)
              try tx.set(o, a.name, v)
              expected[o]?.set(a.id, v)
              if g.chance(0.2) { #expect(try tx.value(o, a.name) == v) }
            }
          }
        }
        for o in objects { #expect(try Self.storedRecord(store, o) == expected[o]?.encoded(), "seed \(seed)") }
      }
      try store.read { s throws in
        for o in objects { #expect(try s.object(o) == expected[o]) }
      }
    }
    #expect(try store.verify().isOK)
  }

  @Test("a required attribute removed from a stored object is refused, and set again it is not")
  func requiredRemoved() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    let o = try store.write { tx throws in
      try tx.insert("Thing", ["label": .string("first"), "astring": .string("kept")])
    }.value!
    #expect {
      try store.write { tx throws in try tx.set(o, "label", nil) }
    } throws: { error in
      guard let e = error as? StoreError, e.code == .validation else { return false }
      return e.property == "label"
    }
    try store.write { tx throws in
      try tx.set(o, "label", nil)
      try tx.set(o, "label", .string("second"))
    }
    #expect(try store.read { try $0.value(o, "label") } == .string("second"))
    #expect(try store.read { try $0.value(o, "astring") } == .string("kept"))
  }

  @Test("a stored record whose entries are out of order is written back as a decoded one would be")
  func outOfOrder() throws {
    let model = try Self.model()
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    let thing = try #require(model.entity(named: "Thing"))
    let label = try #require(thing.attribute(named: "label"))
    let text = try #require(thing.attribute(named: "astring"))
    let number = try #require(thing.attribute(named: "aint16"))
    let o = try store.write { tx throws in
      try tx.insert("Thing", ["label": .string("l"), "astring": .string("s"), "aint16": .int16(7)])
    }.value!
    // The same values, entries written last to first (no encoder of the store does this).
    var w = BinaryWriter()
    w.varint(UInt64(thing.id.rawValue))
    w.varint(3)
    for (a, v) in [(label, Value.string("l")), (text, .string("s")), (number, .int16(7))].reversed() {
      w.varint(UInt64(a.id.rawValue))
      w.value(v)
    }
    try store.env.write { txn throws(LMDBError) in
      _ = try txn.put(store.dbs.objects, key: StoreKey.object(o), value: w.bytes)
    }
    try store.write { tx throws in try tx.set(o, "aint16", .int16(8)) }
    var state = ObjectState(id: o, entity: thing.id, propertyCount: thing.properties.count)
    state.set(label.id, .string("l"))
    state.set(text.id, .string("s"))
    state.set(number.id, .int16(8))
    #expect(try Self.storedRecord(store, o) == state.encoded())
  }
}
