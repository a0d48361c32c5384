import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// A record with one property of each attribute type (and each Swift type a type allows).
struct Sample: Record, Equatable {
  static let entityName = "Sample"
  var text: String
  var small: Int16
  var medium: Int32
  var large: Int64
  var plain: Int
  var real: Double
  var single: Float
  var exact: Decimal
  var flag: Bool
  var when: Date
  var blob: Data
  var bytes: [UInt8]
  var key: UUID
  var link: URL
  var linkText: String
  var transformed: Data
  var note: String?
  var count: Int32?
}

@Suite("Records: Codable structs read and written as objects")
struct RecordTests {
  static func sampleModel() throws -> Model {
    try Model(
      name: "Samples", version: 1,
      entities: [
        EntityDescription(
          name: "Sample",
          attributes: [
            AttributeDescription(name: "text", type: .string),
            AttributeDescription(name: "small", type: .int16),
            AttributeDescription(name: "medium", type: .int32),
            AttributeDescription(name: "large", type: .int64),
            AttributeDescription(name: "plain", type: .int16),
            AttributeDescription(name: "real", type: .double),
            AttributeDescription(name: "single", type: .float),
            AttributeDescription(name: "exact", type: .decimal),
            AttributeDescription(name: "flag", type: .boolean),
            AttributeDescription(name: "when", type: .date),
            AttributeDescription(name: "blob", type: .binary),
            AttributeDescription(name: "bytes", type: .binary),
            AttributeDescription(name: "key", type: .uuid),
            AttributeDescription(name: "link", type: .uri),
            AttributeDescription(name: "linkText", type: .uri),
            AttributeDescription(name: "transformed", type: .binary, isTransformable: true, transformer: "Colour"),
            AttributeDescription(name: "note", type: .string, isOptional: true),
            AttributeDescription(name: "count", type: .int32, isOptional: true),
          ])
      ])
  }

  static func randomSample(_ g: inout SeededGenerator) -> Sample {
    func bytes() -> [UInt8] { (0..<g.int(0...12)).map { _ in UInt8(truncatingIfNeeded: g.next()) } }
    let texts = ["", "桃", "e\u{301}mile", "a\u{0}b", "🍑 and more", "plain"]
    return Sample(
      text: g.pick(texts), small: Int16(truncatingIfNeeded: g.next()), medium: Int32(truncatingIfNeeded: g.next()),
      large: Int64(bitPattern: g.next()), plain: Int(Int16(truncatingIfNeeded: g.next())),
      real: Double(Int64(bitPattern: g.next())) / 1e6, single: Float(Int32(truncatingIfNeeded: g.next())) / 8,
      exact: Decimal(Int64(bitPattern: g.next() >> 4)) / 1000, flag: g.chance(0.5),
      when: Date(timeIntervalSince1970: Double(Int64(g.next() % 4_000_000_000)) - 1e9 + 0.25),
      blob: Data(bytes()), bytes: bytes(), key: UUID(), link: URL(fileURLWithPath: "/tmp/sample \(g.next() % 100)"),
      linkText: "urn:isbn:\(g.next() % 1000)", transformed: Data(bytes()), note: g.chance(0.5) ? g.pick(texts) : nil,
      count: g.chance(0.5) ? Int32(truncatingIfNeeded: g.next()) : nil)
  }

  @Test(
    "every attribute type round-trips through a record, and reads as the dynamic API's value", arguments: [1, 2, 3])
  func roundTrip(seed: UInt64) throws {
    let (store, dir) = try makeStore(try Self.sampleModel())
    defer { removeDirectory(dir) }
    var g = SeededGenerator(seed: seed)
    let samples = (0..<20).map { _ in Self.randomSample(&g) }
    let ids = try store.write { tx in try samples.map { try tx.insert($0) } }.value!
    try store.read { s throws in
      for (id, sample) in zip(ids, samples) {
        #expect(try s.record(id)?.record == sample)
        #expect(try s.value(id.id, "small") == .int16(sample.small))
        #expect(try s.value(id.id, "plain") == .int16(Int16(sample.plain)))
        #expect(try s.value(id.id, "link") == .uri(sample.link.absoluteString))
        #expect(try s.value(id.id, "linkText") == .uri(sample.linkText))
        #expect(try s.value(id.id, "transformed") == .binary(Array(sample.transformed)))
        #expect(try s.value(id.id, "exact") == .decimal(sample.exact))
        #expect(try s.value(id.id, "note") == sample.note.map { .string($0) })
      }
      #expect(try s.fetch(Sample.self).map(\.record) == samples)
    }
  }

  @Test("an Int beyond the attribute's width is refused, naming the attribute, and nothing is written")
  func intOverflow() throws {
    let (store, dir) = try makeStore(try Self.sampleModel())
    defer { removeDirectory(dir) }
    var g = SeededGenerator(seed: 9)
    var sample = Self.randomSample(&g)
    sample.plain = 40_000
    #expect {
      try store.write { tx in try tx.insert(sample) }
    } throws: { e in
      (e as? StoreError)?.code == .wrongType && "\(e)".contains("plain") && "\(e)".contains("int16")
    }
    #expect(try store.read { try $0.objects(of: "Sample") }.isEmpty)
  }

  @Test("an update writes a set event for each changed attribute and nothing for the rest")
  func updateWritesChanges() throws {
    let (store, dir) = try makeStore(try Self.sampleModel())
    defer { removeDirectory(dir) }
    var g = SeededGenerator(seed: 4)
    var sample = Self.randomSample(&g)
    sample.note = "before"
    let id = try store.write { tx in try tx.insert(sample) }.value!
    let model = store.model
    guard let entity = model.entity(named: "Sample") else { throw RecordError.testFailure }
    func lastEvents() throws -> [Event] { try store.read { try $0.commits() }.last?.events ?? [] }

    // Unchanged: no event at all.
    try store.write { tx in try tx.update(id, sample) }
    #expect(try store.read { try $0.commits() }.dropFirst().flatMap(\.events).isEmpty)

    sample.text += "!"
    sample.note = nil
    sample.count = 7
    try store.write { tx in try tx.update(id, sample) }
    let events = try lastEvents()
    func p(_ name: String) -> PropertyID { entity.propertyID(named: name) ?? PropertyID(rawValue: 999) }
    #expect(
      Set(events.map { "\($0)" }) == [
        "\(Event.set(id.id, attribute: p("text"), value: .string(sample.text)))",
        "\(Event.set(id.id, attribute: p("note"), value: nil))",
        "\(Event.set(id.id, attribute: p("count"), value: .int32(7)))",
      ])
    #expect(events.count == 3)
    #expect(try store.read { try $0.record(id)?.record } == sample)
  }

  @Test("the version is the first sequence of the last commit that changed the object")
  func versions() throws {
    let (store, dir) = try makeStore(try Self.sampleModel())
    defer { removeDirectory(dir) }
    var g = SeededGenerator(seed: 5)
    var sample = Self.randomSample(&g)
    let id = try store.write { tx in try tx.insert(sample) }.value!
    let first = try store.read { try $0.record(id)?.version }
    #expect(first == 1)
    sample.flag.toggle()
    try store.write { tx in try tx.update(id, sample) }
    let second = try store.read { try $0.record(id) }
    let commits = try store.read { try $0.commits() }
    #expect(second?.version == commits.last?.firstSequence)
    #expect((second?.version ?? 0) > (first ?? 0))
    #expect(second?.id == id)
    #expect(second?.flag == sample.flag)
  }
}

extension RecordError {
  /// A fixture that is not what the test expects.
  static let testFailure = RecordError(
    .doesNotFitModel, record: Sample.self, entity: "?", detail: "the test's fixture is wrong")
}
