import EventGraphText
import Foundation
import Testing

@testable import EventGraph

@Suite("Value rules: min/max value and length, regular expressions, transformable, transient, overflow")
struct ValueRulesTests {
  static func members() throws -> Model { try Fixtures.model("Members.model.json") }

  /// The validation error `body` is refused with, as `property: detail`; `nil` when it commits.
  static func refusal(_ store: EventStore, _ body: (Transaction) throws -> Void) -> String? {
    do {
      try store.write { tx throws in try body(tx) }
      return nil
    } catch let e as StoreError where e.code == .validation || e.code == .wrongType {
      return "\(e.property ?? ""): \(e.detail ?? "")"
    } catch {
      return "unexpected: \(error)"
    }
  }

  /// A member with a valid handle and the given values.
  static func insert(_ tx: Transaction, _ values: KeyValuePairs<String, Value?>, handle: String = "momo")
    throws
  {
    let m = try tx.insert("Member", ["handle": .string(handle)])
    for (k, v) in values { try tx.set(m, k, v) }
  }

  @Test("the model file with every new key loads, and writes back the same text and model")
  func roundTrip() throws {
    let m = try Self.members()
    let text = m.jsonText
    let again = try Model(json: Array(text.utf8))
    #expect(again == m)
    #expect(again.jsonText == text)
    #expect(m.userInfo == ["source": "Members.xcdatamodel"])
    let member = try #require(m.entity(named: "Member"))
    #expect(member.description.userInfo == ["table": "members"])
    #expect(member.uniquenessConstraints.map { $0.map(\.name) } == [["handle"], ["club", "number"]])
    let avatar = try #require(member.attribute(named: "avatar"))
    #expect(avatar.type == .binary && avatar.isTransformable && avatar.transformer == "NSSecureUnarchiveFromData")
    #expect(member.attribute(named: "age")?.rules?.maxValue == .int16(150))
    #expect(member.attribute(named: "dues")?.rules?.maxValue == .decimal(Decimal(string: "9999.99")!))
    #expect(member.attribute(named: "draft")?.isTransient == true)
    #expect(member.attribute(named: "draft")?.userInfo == ["note": "kept by the app, not the store"])
    #expect(member.relationship(named: "sponsor")?.userInfo == ["ui": "picker"])
    #expect(text.contains(#""type":"transformable""#) || text.contains(#""type": "transformable""#))
  }

  @Test(
    "each rule accepts the value at its bound and refuses the one past it",
    arguments: [
      ("age", Value.int16(0), Value.int16(-1), "-1 is below minValue 0"),
      ("age", .int16(150), .int16(151), "151 is above maxValue 150"),
      ("number", .int32(1), .int32(0), "0 is below minValue 1"),
      ("rating", .float(5), .float(5.000001), "above maxValue 5.0"),
      ("rating", .double(0), .double(-0.001), "below minValue 0.0"),
      ("dues", .decimal(Decimal(string: "9999.99")!), .decimal(Decimal(string: "10000")!), "above maxValue 9999.99"),
      (
        "joined", .date(Date(timeIntervalSince1970: 946_684_800)), .date(Date(timeIntervalSince1970: 946_684_799.999)),
        "below minValue 2000-01-01T00:00:00.000Z"
      ),
      ("handle", .string("abc"), .string("ab"), "has 2 UTF-16 code units, fewer than minLength 3"),
      ("handle", .string("a234567890123456"), .string("a2345678901234567"), "more than maxLength 16"),
      ("handle", .string("ok_1"), .string("Ok_1"), "does not match regularExpression '[a-z][a-z0-9_]*'"),
      ("handle", .string("abc"), .string("abc\n"), "does not match regularExpression"),
      (
        "avatar", .binary([UInt8](repeating: 1, count: 65536)), .binary([UInt8](repeating: 1, count: 65537)),
        "has 65537 bytes, more than maxLength 65536"
      ),
    ])
  func boundaries(_ attribute: String, _ good: Value, _ bad: Value, _ message: String) throws {
    let (store, dir) = try makeStore(try Self.members())
    defer { removeDirectory(dir) }
    if attribute == "handle" {
      #expect(Self.refusal(store) { tx in try Self.insert(tx, [:], handle: good.stringValue ?? "") } == nil)
      let refused = Self.refusal(store) { tx in try Self.insert(tx, [:], handle: bad.stringValue ?? "") }
      #expect(refused?.hasPrefix("handle: ") == true && refused?.contains(message) == true, "\(refused ?? "")")
    } else {
      #expect(Self.refusal(store) { tx in try Self.insert(tx, [attribute: good]) } == nil)
      let refused = Self.refusal(store) { tx in try Self.insert(tx, [attribute: bad], handle: "other") }
      #expect(refused?.hasPrefix("\(attribute): ") == true && refused?.contains(message) == true, "\(refused ?? "")")
    }
    // Nothing of the refused commit was written: only the first member exists.
    #expect(try store.read { try $0.objects(of: "Member").count } == 1)
  }

  @Test("a string's length is counted in UTF-16 code units, as NSString counts it")
  func utf16Length() throws {
    let (store, dir) = try makeStore(try Self.members())
    defer { removeDirectory(dir) }
    // Two code points outside the BMP: 4 UTF-16 code units but 2 characters.
    let refused = Self.refusal(store) { tx in
      let m = try tx.insert("Member", ["handle": .string("abc")])
      try tx.set(m, "club", .string("x"))
      try tx.set(m, "handle", .string("a" + String(repeating: "😀", count: 8)))
    }
    #expect(refused?.contains("has 17 UTF-16 code units, more than maxLength 16") == true, "\(refused ?? "")")
  }

  @Test("a transient attribute keeps no value: setting one refuses the commit")
  func transient() throws {
    let (store, dir) = try makeStore(try Self.members())
    defer { removeDirectory(dir) }
    let refused = Self.refusal(store) { tx in try Self.insert(tx, ["draft": .string("x")]) }
    #expect(refused == "draft: transient attribute: the store keeps no value")
    #expect(Self.refusal(store) { tx in try Self.insert(tx, ["draft": nil]) } == nil)
  }

  @Test(
    "a number that overflows its type, or is not finite, is refused before it is stored",
    arguments: [
      ("rating", Value.double(1e50), "1e+50 does not fit float"),
      ("rating", .float(.infinity), "inf is not a finite float"),
      ("rating", .double(.nan), "does not fit float"),
      ("dues", .double(1e200), "does not fit decimal"),
      ("age", .int64(70_000), "70000 does not fit int16"),
    ])
  func overflow(_ attribute: String, _ value: Value, _ message: String) throws {
    let (store, dir) = try makeStore(try Self.members())
    defer { removeDirectory(dir) }
    let refused = Self.refusal(store) { tx in try Self.insert(tx, [attribute: value]) }
    #expect(refused?.hasPrefix("\(attribute): ") == true && refused?.contains(message) == true, "\(refused ?? "")")
    #expect(try store.read { try $0.objects(of: "Member").count } == 0)
  }

  @Test("a double attribute refuses infinity set directly, and a float converts a fitting double")
  func finiteDoubles() throws {
    let m = try Model(
      name: "D", version: 1,
      entities: [
        EntityDescription(
          name: "E",
          attributes: [
            AttributeDescription(name: "d", type: .double, isOptional: true),
            AttributeDescription(name: "f", type: .float, isOptional: true),
          ])
      ])
    let (store, dir) = try makeStore(m)
    defer { removeDirectory(dir) }
    #expect(Self.refusal(store) { tx in _ = try tx.insert("E", ["d": .double(-.infinity)]) } != nil)
    #expect(Self.refusal(store) { tx in _ = try tx.insert("E", ["f": .double(3.4e38), "d": .float(1)]) } == nil)
  }
}

@Suite("Value rules: models that cannot hold are refused")
struct ValueRulesModelTests {
  static func model(_ attribute: String, extra: String = "") -> String {
    #"{"name": "X", "version": 1, "entities": [{"name": "A", "attributes": ["# + attribute + "]" + extra + "}]}"
  }

  static let bad: [(String, String)] = [
    (model(#"{"name": "s", "type": "string", "minValue": 1}"#), "minValue: A.s: expected string, got an integer"),
    (model(#"{"name": "n", "type": "int16", "minValue": 70000}"#), "A.n: 70000 does not fit int16"),
    (model(#"{"name": "n", "type": "int16", "minValue": 5, "maxValue": 4}"#), "A.n: minValue 5 exceeds maxValue 4"),
    (model(#"{"name": "b", "type": "boolean", "minValue": true}"#), "A.b: minValue needs a number or date attribute"),
    (model(#"{"name": "n", "type": "int32", "minLength": 1}"#), "A.n: minLength and maxLength need a string"),
    (model(#"{"name": "s", "type": "string", "minLength": -1}"#), "A.s: minLength is negative"),
    (
      model(#"{"name": "s", "type": "string", "minLength": 3, "maxLength": 2}"#), "A.s: minLength 3 exceeds maxLength 2"
    ),
    (model(#"{"name": "s", "type": "string", "minLength": 1.5}"#), "key 'minLength' must be an integer"),
    (
      model(#"{"name": "s", "type": "string", "regularExpression": "[a-"}"#),
      "A.s: regularExpression '[a-' does not compile"
    ),
    (model(#"{"name": "b", "type": "binary", "regularExpression": "a"}"#), "A.b: regularExpression needs a string"),
    (model(#"{"name": "b", "type": "binary", "transformer": "T"}"#), "A.b: 'transformer' needs type transformable"),
    (
      model(#"{"name": "s", "type": "string", "transient": true, "indexed": true}"#),
      "A.s: a transient attribute has no value to index"
    ),
    (
      model(#"{"name": "n", "type": "int16", "default": 0, "minValue": 1}"#),
      "A.n: invalid default: 0 is below minValue 1"
    ),
    (model(#"{"name": "s", "type": "string", "userInfo": {"k": 1}}"#), "key 'k' must be a string"),
    (model(#"{"name": "s", "type": "string", "userInfo": ["k"]}"#), "key 'userInfo' must be an object"),
    (model(#"{"name": "s", "type": "string", "regularExpresion": "a"}"#), "did you mean 'regularExpression'?"),
    (model(#"{"name": "s", "type": "text"}"#), "uri, transformable)"),
    (
      model(#"{"name": "s", "type": "string"}"#, extra: #", "uniquenessConstraints": [["t"]]"#),
      "A: uniquenessConstraints [t]: 't' is no attribute of A"
    ),
    (
      model(#"{"name": "s", "type": "string"}"#, extra: #", "uniquenessConstraints": [[]]"#),
      "A: uniquenessConstraints []: names no attribute"
    ),
    (
      model(#"{"name": "s", "type": "string"}"#, extra: #", "uniquenessConstraints": [["s", "s"]]"#),
      "'s' is named twice"
    ),
    (
      model(#"{"name": "s", "type": "string"}"#, extra: #", "uniquenessConstraints": [["s"], ["s"]]"#),
      "[s]: is declared twice"
    ),
    (
      model(#"{"name": "s", "type": "string"}"#, extra: #", "uniquenessConstraints": ["s"]"#),
      "uniquenessConstraints[0]: expected an array, found a string"
    ),
    (
      model(
        #"{"name": "s", "type": "string", "optional": true, "transient": true}"#,
        extra: #", "uniquenessConstraints": [["s"]]"#), "'s' is transient"
    ),
  ]

  @Test("each mistake in the new keys is refused, naming the file, entity and attribute", arguments: bad)
  func refused(_ text: String, _ expected: String) {
    #expect {
      _ = try Model(json: Array(text.utf8), file: "bad.model.json")
    } throws: { error in
      let message = "\(error)"
      return message.contains("bad.model.json") && message.contains(expected)
    }
  }
}

@Suite("Validation errors name the rule broken")
struct ValidationRuleTests {
  /// A model with one attribute or relationship for each rule a commit can break.
  static func model() throws -> Model {
    try Model(
      name: "Rules", version: 1,
      entities: [
        EntityDescription(
          name: "Club",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "draft", type: .string, isOptional: true, isTransient: true),
            AttributeDescription(
              name: "size", type: .int32, isOptional: true, minValue: .int32(1), maxValue: .int32(9)),
            AttributeDescription(
              name: "code", type: .string, isOptional: true, minLength: 2, maxLength: 4, regularExpression: "[a-z]*"),
          ],
          relationships: [
            RelationshipDescription(name: "home", destination: "Hall", inverse: "club", deleteRule: .deny),
            RelationshipDescription(
              name: "members", destination: "Member", isToMany: true, minCount: 2, maxCount: 3, inverse: "club"),
          ]),
        EntityDescription(
          name: "Hall", relationships: [RelationshipDescription(name: "club", destination: "Club", inverse: "home")]),
        EntityDescription(
          name: "Member",
          relationships: [
            RelationshipDescription(name: "club", destination: "Club", isOptional: false, inverse: "members")
          ]),
      ])
  }

  /// A club that keeps every rule: a name, a hall, two members.
  static func validClub(_ tx: Transaction) throws -> ObjectID {
    let club = try tx.insert("Club", ["name": .string("chess")])
    try tx.link(club, "home", try tx.insert("Hall"))
    for _ in 0..<2 { try tx.link(club, "members", try tx.insert("Member")) }
    return club
  }

  /// What each rule's breaking commit does, to a store holding one valid club.
  static let breaches: [(ValidationRule, String, @Sendable (Transaction, ObjectID) throws -> Void)] = [
    (.required, "name", { tx, _ in _ = try tx.insert("Club") }),
    (.transient, "draft", { tx, club in try tx.set(club, "draft", .string("x")) }),
    (.minValue, "size", { tx, club in try tx.set(club, "size", .int32(0)) }),
    (.maxValue, "size", { tx, club in try tx.set(club, "size", .int32(10)) }),
    (.minLength, "code", { tx, club in try tx.set(club, "code", .string("a")) }),
    (.maxLength, "code", { tx, club in try tx.set(club, "code", .string("abcde")) }),
    (.regularExpression, "code", { tx, club in try tx.set(club, "code", .string("A1")) }),
    (.minCount, "members", { tx, club in try tx.delete(try #require(tx.related(club, "members").first)) }),
    (
      .maxCount, "members",
      { tx, club in for _ in 0..<2 { try tx.link(club, "members", try tx.insert("Member")) } }
    ),
    (.deny, "home", { tx, club in try tx.delete(club) }),
  ]

  @Test("every rule is met by a commit that breaks it, and the error names that rule and property")
  func everyRule() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    let club = try store.write { tx throws in try Self.validClub(tx) }.value!
    let before = try store.read { try $0.logEnd() }
    var met: [ValidationRule] = []
    for (rule, property, breach) in Self.breaches {
      do {
        try store.write { tx throws in try breach(tx, club) }
        Issue.record("the commit breaking \(rule) was not refused")
      } catch let e as StoreError where e.code == .validation {
        #expect(e.rule == rule, "\(e)")
        #expect(e.property == property, "\(e)")
        if let r = e.rule { met.append(r) }
      }
    }
    #expect(met == ValidationRule.all)
    #expect(try store.read { try $0.logEnd() } == before)
  }

  @Test("a required relationship that is empty is the required rule too")
  func requiredRelationship() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    #expect {
      try store.write { tx throws in _ = try tx.insert("Member") }
    } throws: { error in
      guard let e = error as? StoreError else { return false }
      return e.code == .validation && e.rule == .required && e.property == "club"
    }
  }

  @Test("ValueRules.breach names the same rule and words as violation")
  func breachAndViolation() throws {
    let rules = try #require(Self.model().entity(named: "Club")?.attribute(named: "code")?.rules)
    for (value, rule) in [("a", ValidationRule.minLength), ("abcde", .maxLength), ("A1", .regularExpression)] {
      let b = try #require(rules.breach(.string(value)))
      #expect(b.rule == rule && b.message == rules.violation(.string(value)))
    }
    #expect(rules.breach(.string("abc")) == nil)
  }
}
