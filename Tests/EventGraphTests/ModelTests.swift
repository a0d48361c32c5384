import EventGraphText
import Foundation
import TestSupport
import Testing

@testable import EventGraph
@testable import EventGraphModel

@Suite("Models: building, loading and refusing")
struct ModelTests {
  @Test("the seed models load, intern names and resolve inverses")
  func seedModels() throws {
    let v2 = try Fixtures.addressBookV2()
    let book = try #require(v2.entity(named: "AddressBook"))
    let phone = try #require(v2.entity(named: "PhoneBook"))
    let phones = try #require(book.relationship(named: "phones"))
    let back = try #require(phone.relationship(named: "addressBook"))
    #expect(phones.destination == phone.id)
    #expect(phones.inverse == back.id)
    #expect(back.inverse == phones.id)
    #expect(phones.deleteRule == .cascade)
    #expect(phone.attribute(named: "type")?.defaultValue == .int16(0))
    #expect(book.propertyID(named: "lastName") == PropertyID(rawValue: 1))
  }

  @Test("every property is found by its name, in any Unicode normalization, and no other name is")
  func propertyLookup() throws {
    let names = (0..<40).map { "p\($0)" } + ["café", "桃", ""]
    let attributes = names.filter { !$0.isEmpty }.map {
      AttributeDescription(name: $0, type: .string, isOptional: true)
    }
    let model = try Model(name: "Names", version: 1, entities: [EntityDescription(name: "E", attributes: attributes)])
    let e = try #require(model.entity(named: "E"))
    for p in e.properties { #expect(e.propertyID(named: p.name) == p.id) }
    #expect(e.propertyID(named: "cafe\u{301}") == e.propertyID(named: "café"))
    #expect(e.attribute(named: "cafe\u{301}")?.name == "café")
    for missing in ["", "p40", "P1", "cafe", "p1 "] { #expect(e.propertyID(named: missing) == nil) }
  }

  @Test("a model round-trips through its JSON form")
  func roundTrip() throws {
    for m in [try Fixtures.addressBookV1(), try Fixtures.addressBookV2(), try Fixtures.company()] {
      let again = try Model(json: Array(m.json.serialized().utf8))
      #expect(again == m)
    }
  }

  @Test("a sub-entity has its parent's properties with the same IDs and is fetched with it")
  func inheritance() throws {
    let m = try Model(
      name: "I", version: 1,
      entities: [
        EntityDescription(
          name: "Person", isAbstract: true, attributes: [AttributeDescription(name: "name", type: .string)]),
        EntityDescription(
          name: "Employee", parent: "Person",
          attributes: [AttributeDescription(name: "salary", type: .int64, isOptional: true)]),
      ])
    let person = try #require(m.entity(named: "Person"))
    let employee = try #require(m.entity(named: "Employee"))
    #expect(employee.property(named: "name")?.id == person.property(named: "name")?.id)
    #expect(employee.properties.map(\.name) == ["name", "salary"])
    #expect(m.isKind(employee.id, of: person.id))
    #expect(m.descendants(of: person.id) == [person.id, employee.id])
  }

  static let badModels: [(String, String)] = [
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "attributes": [{"name": "a", "type": "text"}]}]}"#,
      "unknown type 'text'"
    ),
    (#"{"name": "X", "version": 1, "entities": [{"name": "A"}, {"name": "A"}]}"#, "entity 'A' is declared twice"),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "attributes": [{"name": "a", "type": "string"}, {"name": "a", "type": "int16"}]}]}"#,
      "A.a: property is declared twice"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "relationships": [{"name": "b", "destination": "B"}]}]}"#,
      "A.b: destination entity 'B' does not exist"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "relationships": [{"name": "b", "destination": "B", "inverse": "a"}]}, {"name": "B"}]}"#,
      "A.b: inverse 'a' does not exist"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "relationships": [{"name": "b", "destination": "B", "inverse": "a"}]}, {"name": "B", "relationships": [{"name": "a", "destination": "A", "inverse": "c"}, {"name": "c", "destination": "A"}]}]}"#,
      "does not name 'b' as its inverse"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "attributes": [{"name": "n", "type": "int16", "default": 70000}]}]}"#,
      "does not fit int16"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "attributes": [{"name": "n", "type": "int16", "default": "x"}]}]}"#,
      "expected int16"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "attributes": [{"name": "n", "type": "string", "optinal": true}]}]}"#,
      "did you mean 'optional'"
    ),
    (#"{"name": "X", "version": 1, "entities": [{"name": "A", "parent": "Z"}]}"#, "parent entity 'Z' does not exist"),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "parent": "B"}, {"name": "B", "parent": "A"}]}"#,
      "inheritance forms a cycle"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "relationships": [{"name": "b", "destination": "A", "ordered": true}]}]}"#,
      "'ordered' needs 'toMany'"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "relationships": [{"name": "b", "destination": "A", "toMany": true, "minCount": 3, "maxCount": 2}]}]}"#,
      "minCount 3 exceeds maxCount 2"
    ),
    (
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "relationships": [{"name": "b", "destination": "A", "deleteRule": "explode"}]}]}"#,
      "unknown deleteRule 'explode'"
    ),
    (#"{"name": "X", "version": 0, "entities": []}"#, "version: must be 1 or more"),
    (#"{"name": "X", "version": 1, "entities": [{"name": "1A"}]}"#, "invalid name '1A'"),
    (#"{"name": "X", "version": 1, "entities": [], "extra": 1}"#, "unknown key 'extra'"),
    (#"{"name": "X", "version": 1, "entities": ["#, "line 1"),
  ]

  @Test("a bad model is refused with an error naming the file, entity and property", arguments: badModels)
  func badModel(_ text: String, _ expected: String) throws {
    #expect {
      _ = try Model(json: Array(text.utf8), file: "bad.model.json")
    } throws: { error in
      let message = "\(error)"
      return message.contains("bad.model.json") && message.contains(expected)
    }
  }
}

@Suite("Values: conversion and dates")
struct ValueTests {
  /// Each case: a value, conversion or rule that cannot be had, and the code it is refused with.
  static let valueFaults: [(@Sendable () throws -> Void, String)] = [
    ({ _ = try Value.string("7").converted(to: .int64) }, "wrongType"),
    ({ _ = try Value.int64(70_000).converted(to: .int16) }, "outOfRange"),
    ({ _ = try Value.double(1e50).converted(to: .float) }, "outOfRange"),
    ({ _ = try Value.double(.infinity).converted(to: .double) }, "notFinite"),
    ({ _ = try Value.double(.nan).converted(to: .int64) }, "notFinite"),
    ({ _ = try Value.fromJSON(.string("yesterday"), as: .date) }, "invalidText"),
    ({ _ = try Value.fromJSON(.string("not-a-uuid"), as: .uuid) }, "invalidText"),
    ({ _ = try Value.fromJSON(.bool(true), as: .string) }, "wrongType"),
    (
      {
        _ = try ValueRules(
          minValue: .int16(5), maxValue: .int16(1), minLength: nil, maxLength: nil, regularExpression: nil)
      }, "invalidRule"
    ),
    (
      {
        _ = try ValueRules(minValue: nil, maxValue: nil, minLength: -1, maxLength: nil, regularExpression: nil)
      }, "invalidRule"
    ),
    (
      {
        _ = try ValueRules(minValue: nil, maxValue: nil, minLength: nil, maxLength: nil, regularExpression: "(")
      }, "invalidRule"
    ),
  ]

  @Test("a value that cannot be had says which kind of fault it is", arguments: 0..<11)
  func valueErrorCodes(index: Int) {
    let (body, code) = Self.valueFaults[index]
    do {
      try body()
      Issue.record("no error where \(code) was expected")
    } catch let error as ValueError {
      #expect(error.code.name == code, "\(error)")
    } catch {
      Issue.record("not a ValueError: \(error)")
    }
  }

  @Test(
    "numbers convert only when nothing is lost",
    arguments: [
      (Value.int64(5), AttributeType.int16, Value.int16(5) as Value?),
      (.int64(40_000), .int16, nil),
      (.double(3.0), .int32, .int32(3)),
      (.double(3.5), .int32, nil),
      (.int16(7), .double, .double(7)),
      (.int64(7), .decimal, .decimal(7)),
      (.string("7"), .int64, nil),
      (.boolean(true), .string, nil),
    ])
  func conversion(_ value: Value, _ type: AttributeType, _ expected: Value?) {
    #expect((try? value.converted(to: type)) == expected)
  }

  @Test("ISO 8601 dates round trip at millisecond precision and refuse bad text")
  func dates() throws {
    var g = SeededGenerator(seed: 3)
    for _ in 0..<500 {
      let ms = Int64(g.next() % 8_000_000_000_000) - 2_000_000_000_000
      let d = Date(timeIntervalSince1970: Double(ms) / 1000)
      let text = ISO8601.format(d)
      let back = try #require(ISO8601.parse(text))
      #expect(ISO8601.format(back) == text)
      #expect(abs(back.timeIntervalSince1970 - d.timeIntervalSince1970) < 0.001)
    }
    #expect(ISO8601.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    #expect(ISO8601.parse("2026-11-29T10:00:00+09:00") == ISO8601.parse("2026-11-29T01:00:00Z"))
    for bad in ["", "2026-13-01T00:00:00Z", "2026-11-29 10:00:00Z", "2026-11-29T10:00:00", "x026-11-29T10:00:00Z"] {
      #expect(ISO8601.parse(bad) == nil, "\(bad)")
    }
  }

  @Test(
    "JSON values read as the attribute's type",
    arguments: [
      (JSON.string("2026-11-29T10:00:00.000Z"), AttributeType.date, true),
      (.string("AAEC"), .binary, true),
      (.string("not base64!"), .binary, false),
      (.string("12.50"), .decimal, true),
      (.string("twelve"), .decimal, false),
      (.string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), .uuid, true),
      (.int(1), .boolean, false),
      (.bool(true), .boolean, true),
      (.double(1.5), .int16, false),
    ])
  func jsonValues(_ json: JSON, _ type: AttributeType, _ ok: Bool) {
    #expect(((try? Value.fromJSON(json, as: type)) != nil) == ok)
  }
}
