import EventGraphText
import TestSupport
import Testing

@testable import EventGraph

// MARK: - Valid documents

/// A document the parser must accept, and the value it must read.
struct ValidJSONCase: Sendable, CustomTestStringConvertible {
  let text: String
  let expected: JSON
  init(_ text: String, _ expected: JSON) {
    self.text = text
    self.expected = expected
  }
  var testDescription: String { text.count > 40 ? String(text.prefix(40)) + "…" : text }
}

/// A document the parser must refuse, and where and why.
struct InvalidJSONCase: Sendable, CustomTestStringConvertible {
  let bytes: [UInt8]
  let line: Int
  let column: Int
  let message: String
  init(_ text: String, _ line: Int, _ column: Int, _ message: String) {
    self.init(bytes: Array(text.utf8), line, column, message)
  }
  init(bytes: [UInt8], _ line: Int, _ column: Int, _ message: String) {
    self.bytes = bytes
    self.line = line
    self.column = column
    self.message = message
  }
  var testDescription: String { String(decoding: bytes, as: UTF8.self).debugDescription }
}

@Suite("JSON parsing")
struct JSONParsingTests {
  static let validCases: [ValidJSONCase] = [
    ValidJSONCase("null", .null),
    ValidJSONCase("true", .bool(true)),
    ValidJSONCase("false", .bool(false)),
    ValidJSONCase("0", .int(0)),
    ValidJSONCase("-0", .int(0)),
    ValidJSONCase("123", .int(123)),
    ValidJSONCase("-123", .int(-123)),
    ValidJSONCase("1.5", .double(1.5)),
    ValidJSONCase("-0.0", .double(-0.0)),
    ValidJSONCase("1e3", .double(1000)),
    ValidJSONCase("1E+3", .double(1000)),
    ValidJSONCase("1e-3", .double(0.001)),
    ValidJSONCase("123.456e-5", .double(123.456e-5)),
    ValidJSONCase("0.1", .double(0.1)),
    ValidJSONCase("9223372036854775807", .int(.max)),
    ValidJSONCase("-9223372036854775808", .int(.min)),
    ValidJSONCase("9223372036854775808", .double(9_223_372_036_854_775_808)),
    ValidJSONCase("-9223372036854775809", .double(-9.223372036854775808e18)),
    ValidJSONCase("12345678901234567890123", .double(1.2345678901234568e22)),
    ValidJSONCase("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
    ValidJSONCase("4.9406564584124654e-324", .double(.leastNonzeroMagnitude)),
    ValidJSONCase("1e-400", .double(0)),
    ValidJSONCase(#""""#, .string("")),
    ValidJSONCase(#""a\"b\\c\/d""#, .string(#"a"b\c/d"#)),
    ValidJSONCase(#""\b\f\n\r\t""#, .string("\u{8}\u{C}\n\r\t")),
    ValidJSONCase(#""\u00e9\u00C9""#, .string("éÉ")),
    ValidJSONCase(#""\u0000""#, .string("\u{0}")),
    ValidJSONCase(#""\uD83D\uDE00""#, .string("😀")),
    ValidJSONCase(#""日本語 🍑""#, .string("日本語 🍑")),
    ValidJSONCase("[]", .array([])),
    ValidJSONCase("{}", .object([])),
    ValidJSONCase(" \t\r\n[ 1 , \"two\" , null ]\n", [1, "two", .null]),
    ValidJSONCase(#"{"b": 1, "a": 2}"#, .object([JSONField("b", 1), JSONField("a", 2)])),
    ValidJSONCase(#"{"a": {"b": [{}, []]}}"#, ["a": ["b": [.object([]), .array([])]]]),
    ValidJSONCase("\u{FEFF}[1]", [1]),
  ]

  @Test("accepts valid documents and reads their values", arguments: validCases)
  func acceptsValid(_ testCase: ValidJSONCase) throws {
    let value = try JSON(parsing: testCase.text)
    #expect(value == testCase.expected)
  }

  static let invalidCases: [InvalidJSONCase] = [
    InvalidJSONCase("", 1, 1, "expected a JSON value, found end of input"),
    InvalidJSONCase(" \t\r\n", 2, 1, "expected a JSON value, found end of input"),
    InvalidJSONCase("[1,]", 1, 4, "expected a value after ',' in array, found ']'"),
    InvalidJSONCase("[1,,2]", 1, 4, "expected a value after ',' in array, found ','"),
    InvalidJSONCase(#"{"a":1,}"#, 1, 8, "expected a string key after ',' in object, found '}'"),
    InvalidJSONCase(#"{"a" 1}"#, 1, 6, "expected ':' after object key 'a', found '1'"),
    InvalidJSONCase(#"{"a":1 "b":2}"#, 1, 8, "expected ',' or '}' after object member, found '\"'"),
    InvalidJSONCase(#"{"a":}"#, 1, 6, "expected a value for key 'a', found '}'"),
    InvalidJSONCase("{a:1}", 1, 2, "expected a string key or '}' after '{', found 'a'"),
    InvalidJSONCase("{", 1, 2, "expected a string key or '}' after '{', found end of input"),
    InvalidJSONCase("[", 1, 2, "expected a value or ']' after '[', found end of input"),
    InvalidJSONCase("[1 2]", 1, 4, "expected ',' or ']' after array element, found '2'"),
    InvalidJSONCase("[1} ", 1, 3, "expected ',' or ']' after array element, found '}'"),
    InvalidJSONCase("01", 1, 2, "leading zeros are not allowed in a number, found '1'"),
    InvalidJSONCase("-", 1, 2, "expected a digit after '-', found end of input"),
    InvalidJSONCase("-Infinity", 1, 2, "expected a digit after '-', found 'I'"),
    InvalidJSONCase("1.", 1, 3, "expected a digit after '.', found end of input"),
    InvalidJSONCase("1.e5", 1, 3, "expected a digit after '.', found 'e'"),
    InvalidJSONCase("1e", 1, 3, "expected a digit in the exponent, found end of input"),
    InvalidJSONCase("1e+", 1, 4, "expected a digit in the exponent, found end of input"),
    InvalidJSONCase("+1", 1, 1, "expected a JSON value, found '+'"),
    InvalidJSONCase(".5", 1, 1, "expected a JSON value, found '.'"),
    InvalidJSONCase("NaN", 1, 1, "expected a JSON value, found 'N'"),
    InvalidJSONCase("[1e400]", 1, 2, "number 1e400 is out of the range of a double"),
    InvalidJSONCase("// comment\n1", 1, 1, "expected a JSON value, found '/'"),
    InvalidJSONCase("[1] x", 1, 5, "expected end of input after the JSON value, found 'x'"),
    InvalidJSONCase("1 2", 1, 3, "expected end of input after the JSON value, found '2'"),
    InvalidJSONCase("tru", 1, 4, "expected 'true', found end of input"),
    InvalidJSONCase("nul1", 1, 4, "expected 'null', found '1'"),
    InvalidJSONCase("True", 1, 1, "expected a JSON value, found 'T'"),
    InvalidJSONCase(#""abc"#, 1, 5, "expected '\"' to end the string, found end of input"),
    InvalidJSONCase("\"a\nb\"", 1, 3, "control character must be escaped in a string, found newline"),
    InvalidJSONCase("\"\u{1}\"", 1, 2, "control character must be escaped in a string, found control character U+0001"),
    InvalidJSONCase(
      #""\x""#, 1, 3, #"invalid escape: expected one of \" \\ \/ \b \f \n \r \t \uXXXX, found 'x'"#),
    InvalidJSONCase(#""\u12G4""#, 1, 6, "expected 4 hexadecimal digits after '\\u', found 'G'"),
    InvalidJSONCase(
      #""\uD800""#, 1, 2, #"lone surrogate \uD800: expected a low surrogate escape (\uDC00-\uDFFF) to follow"#),
    InvalidJSONCase(#""\uDC00x""#, 1, 2, #"lone surrogate \uDC00: a low surrogate must follow a high surrogate"#),
    InvalidJSONCase(
      #""\uD800\u0041""#, 1, 8, "expected a low surrogate (\\uDC00-\\uDFFF) after \\uD800, found \\u0041"),
    InvalidJSONCase(#"{"a":1,"a":2}"#, 1, 8, "duplicate key 'a' in object"),
    InvalidJSONCase("{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7, "expected ':' after object key 'b', found '2'"),
    InvalidJSONCase("[\"日本\", x]", 1, 8, "expected a value after ',' in array, found 'x'"),
    InvalidJSONCase("[日本]", 1, 2, "expected a value or ']' after '[', found '日'"),
    InvalidJSONCase(bytes: [0x22, 0xFF, 0x22], 1, 2, "invalid UTF-8: byte 0xFF cannot start a character"),
    InvalidJSONCase(bytes: [0x22, 0xC0, 0xAF, 0x22], 1, 2, "invalid UTF-8: byte 0xC0 cannot start a character"),
    InvalidJSONCase(
      bytes: [0x22, 0xE6, 0x97, 0x22], 1, 3, "invalid UTF-8 sequence: byte 0x22 cannot follow byte 0xE6"),
    InvalidJSONCase(
      bytes: [0x22, 0xED, 0xA0, 0x80, 0x22], 1, 3, "invalid UTF-8 sequence: byte 0xA0 cannot follow byte 0xED"),
    InvalidJSONCase(
      bytes: [0x22, 0xF0, 0x9F, 0x98], 1, 3, "invalid UTF-8 sequence: end of input cannot follow byte 0xF0"),
  ]

  @Test("refuses invalid documents, pointing at the offending character", arguments: invalidCases)
  func refusesInvalid(_ testCase: InvalidJSONCase) {
    do {
      let value = try JSON(parsing: testCase.bytes)
      Issue.record("parsed \(value) from an invalid document")
    } catch {
      #expect(error.line == testCase.line)
      #expect(error.column == testCase.column)
      #expect(error.message == testCase.message)
      #expect(error.description == "line \(error.line), column \(error.column): \(error.message)")
    }
  }

  @Test("keeps Int64 minimum and maximum exact")
  func integerExtremes() throws {
    #expect(try JSON(parsing: String(Int64.max)) == .int(.max))
    #expect(try JSON(parsing: String(Int64.min)) == .int(.min))
    #expect(JSON.int(.max).serialized() == "9223372036854775807")
    #expect(JSON.int(.min).serialized() == "-9223372036854775808")
    #expect(try JSON(parsing: "[9007199254740993]") == [.int(9_007_199_254_740_993)])
  }

  @Test("reads byte collections of any kind")
  func byteCollections() throws {
    let text = #"{"name": "桃"}"#
    #expect(try JSON(parsing: Array(text.utf8)) == ["name": "桃"])
    #expect(try JSON(parsing: text.utf8) == ["name": "桃"])
    #expect(try JSON(parsing: Array(text.utf8)[...]) == ["name": "桃"])
  }

  @Test("refuses a duplicate key in a large object as in a small one")
  func duplicateKeyInLargeObject() throws {
    let members = (0..<40).map { "\"k\($0)\": \($0)" } + ["\"k17\": 0"]
    let text = "{" + members.joined(separator: ", ") + "}"
    #expect(throws: JSONError.self) { try JSON(parsing: text) }
    do {
      _ = try JSON(parsing: text)
    } catch {
      #expect(error.message == "duplicate key 'k17' in object")
    }
    let distinct = "{" + (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ") + "}"
    #expect(try JSON(parsing: distinct).objectFields?.count == 40)
  }

  @Test("accepts the same key in different objects")
  func sameKeyInSiblings() throws {
    let value = try JSON(parsing: #"[{"a": 1}, {"a": 2, "b": {"a": 3}}]"#)
    #expect(value.arrayValue?.count == 2)
  }

  @Test("accepts nesting up to 512 levels and refuses 513")
  func depthLimit() throws {
    let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    _ = try JSON(parsing: deepest)
    let objects = String(repeating: #"{"a":"#, count: 511) + "[]" + String(repeating: "}", count: 511)
    _ = try JSON(parsing: objects)
    let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
    #expect(throws: JSONError(line: 1, column: 513, message: "arrays and objects nested deeper than 512 levels")) {
      try JSON(parsing: tooDeep)
    }
  }

  @Test("refuses 100,000 nested brackets with an error, not a crash")
  func hostileNesting() {
    let hostile = String(repeating: "[", count: 100_000)
    #expect(throws: JSONError.self) { try JSON(parsing: hostile) }
    let hostileObjects = String(repeating: #"{"a":"#, count: 100_000)
    #expect(throws: JSONError.self) { try JSON(parsing: hostileObjects) }
  }

  @Test("reads a 10 MB string")
  func largeString() throws {
    let body = String(repeating: "abcdefghij", count: 1_000_000)
    let value = try JSON(parsing: "[\"" + body + "日本\\n\"]")
    #expect(value.arrayValue?.first?.stringValue?.utf8.count == 10_000_000 + 7)
    let plain = try JSON(parsing: "\"" + body + "\"")
    #expect(plain.stringValue?.utf8.count == 10_000_000)
  }
}

// MARK: - Serialization

@Suite("JSON serialization")
struct JSONSerializationTests {
  @Test("writes compact JSON in the layout of the formats, keys in stored order")
  func compactLayout() {
    let value: JSON = [
      "id": "AddressBook/1", "entity": "AddressBook",
      "attributes": ["firstName": "桃", "age": 7, "score": 1.0, "tags": [], "extra": .object([])],
      "relationships": ["phones": ["PhoneBook/7", "PhoneBook/8"], "parent": .null], "active": true,
    ]
    #expect(
      value.serialized()
        == #"{"id": "AddressBook/1", "entity": "AddressBook", "attributes": {"firstName": "桃", "age": 7, "score": 1.0, "tags": [], "extra": {}}, "relationships": {"phones": ["PhoneBook/7", "PhoneBook/8"], "parent": null}, "active": true}"#
    )
  }

  @Test("writes pretty JSON with two-space indentation")
  func prettyLayout() {
    let value: JSON = ["name": "AddressBook", "version": 2, "entities": [["name": "A", "attributes": []]]]
    let expected = """
      {
        "name": "AddressBook",
        "version": 2,
        "entities": [
          {
            "name": "A",
            "attributes": []
          }
        ]
      }
      """
    #expect(value.serialized(pretty: true) == expected)
  }

  @Test("escapes quotes, backslashes and control characters, and nothing else")
  func escaping() {
    let value = JSON.string("a\"b\\c/d\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}é日本😀")
    #expect(value.serialized() == #""a\"b\\c/d\n\r\t\b\f\u0000\u001F"# + "\u{7F}é日本😀\"")
  }

  @Test(
    "writes doubles in shortest form that reads back as a double",
    arguments: [
      (1.0, "1.0"), (0.1, "0.1"), (-2.5, "-2.5"), (1e16, "1e+16"), (1e-5, "1e-05"), (100.0, "100.0"),
      (-0.0, "-0.0"), (.greatestFiniteMagnitude, "1.7976931348623157e+308"), (.leastNonzeroMagnitude, "5e-324"),
    ])
  func doubleForms(value: Double, text: String) throws {
    #expect(JSON.double(value).serialized() == text)
    let back = try JSON(parsing: text)
    #expect(back == .double(value))
    #expect(back.doubleValue?.sign == value.sign)
  }

  @Test("writes non-finite doubles as null")
  func nonFinite() {
    #expect(JSON.array([.double(.infinity), .double(-.infinity), .double(.nan)]).serialized() == "[null, null, null]")
  }

  @Test("round-trips tricky doubles exactly")
  func doubleRoundTrip() throws {
    let tricky: [Double] = [
      0.1 + 0.2, 1 / 3, 2.2250738585072014e-308, Double.leastNormalMagnitude.nextDown, 9_007_199_254_740_992,
      123456.789e-300, 1.0000000000000002, 0.30000000000000004, .leastNonzeroMagnitude, 8.98846567431158e307,
      1e23, 3.0e-44, 1.23456789012345e-7, Double(bitPattern: 0x0000_5020_0000_0001),
      Double(bitPattern: 0x7FEF_FFFF_FFFF_FFFE),
    ]
    for d in tricky + tricky.map(-) {
      let back = try JSON(parsing: JSON.double(d).serialized())
      #expect(back.doubleValue?.bitPattern == d.bitPattern, "\(d)")
    }
  }

  @Test("round-trips documents: parse, serialize, parse")
  func documentRoundTrip() throws {
    let documents = [
      #"{"id": "PhoneBook/7", "entity": "PhoneBook", "attributes": {"phoneNumber": "090-111-9999", "type": 2}, "relationships": {"addressBook": "AddressBook/1"}}"#,
      #"{"seq": 1, "commit": 1, "time": "2026-11-29T10:00:00.000Z", "type": "insert", "object": "AddressBook/1", "entity": "AddressBook"}"#,
      #"[1, -2, 3.5, 1e+100, "\u0001", "\"", null, true, false, [], {}, [[[]]], {"a": {"b": {}}}]"#,
    ]
    for text in documents {
      let value = try JSON(parsing: text)
      #expect(value.serialized() == text)
      #expect(try JSON(parsing: value.serialized(pretty: true)) == value)
    }
  }
}

// MARK: - Accessors

@Suite("JSON accessors")
struct JSONAccessorTests {
  @Test("reads members and scalars through the convenience accessors")
  func accessors() throws {
    let value = try JSON(parsing: #"{"s": "x", "i": 3, "d": 2.5, "b": false, "a": [1], "o": {"k": null}}"#)
    #expect(value["s"]?.stringValue == "x")
    #expect(value["i"]?.int64Value == 3)
    #expect(value["i"]?.doubleValue == 3)
    #expect(value["d"]?.doubleValue == 2.5)
    #expect(value["d"]?.int64Value == nil)
    #expect(value["b"]?.boolValue == false)
    #expect(value["a"]?.arrayValue == [1])
    #expect(value["o"]?["k"]?.isNull == true)
    #expect(value["missing"] == nil)
    #expect(value.objectFields?.map(\.key) == ["s", "i", "d", "b", "a", "o"])
    #expect(JSON.int(1)["s"] == nil)
    #expect(JSON.string("x").objectFields == nil)
  }
}

// MARK: - Property test

/// Random JSON values: every kind, awkward strings, extreme numbers, nesting to `depth`.
private struct RandomJSON {
  var random: SeededGenerator

  mutating func value(depth: Int) -> JSON {
    let kinds = depth > 0 ? 8 : 6
    switch Int.random(in: 0..<kinds, using: &random) {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &random))
    case 2: return .int(integer())
    case 3: return .double(double())
    case 4, 5: return .string(string())
    case 6: return .array((0..<Int.random(in: 0...5, using: &random)).map { _ in value(depth: depth - 1) })
    default:
      var seen: Set<String> = []
      var fields: [JSONField] = []
      for _ in 0..<Int.random(in: 0...5, using: &random) {
        let key = string()
        if seen.insert(key).inserted { fields.append(JSONField(key, value(depth: depth - 1))) }
      }
      return .object(fields)
    }
  }

  mutating func integer() -> Int64 {
    switch Int.random(in: 0..<4, using: &random) {
    case 0: return [Int64.min, Int64.max, 0, -1, 1].randomElement(using: &random) ?? 0
    case 1: return Int64.random(in: -1000...1000, using: &random)
    default: return Int64(bitPattern: random.next())
    }
  }

  mutating func double() -> Double {
    switch Int.random(in: 0..<3, using: &random) {
    case 0: return Double.random(in: -1000...1000, using: &random)
    case 1: return Double(Int.random(in: -1000...1000, using: &random))
    default:
      while true {
        let d = Double(bitPattern: random.next())
        if d.isFinite { return d }
      }
    }
  }

  mutating func string() -> String {
    let pieces: [String] = [
      "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "é", "日本", "😀", "\u{FEFF}",
    ]
    var s = ""
    for _ in 0..<Int.random(in: 0...8, using: &random) {
      switch Int.random(in: 0..<4, using: &random) {
      case 0, 1:
        s += pieces.randomElement(using: &random) ?? ""
      case 2:
        // Every control character, each with its own escape.
        s.unicodeScalars.append(Unicode.Scalar(UInt8.random(in: 0..<0x20, using: &random)))
      default:
        let scalarValue = UInt32.random(in: 0...0x10FFFF, using: &random)
        if let scalar = Unicode.Scalar(scalarValue) { s.unicodeScalars.append(scalar) }
      }
    }
    return s
  }
}

@Suite("JSON round-trip property")
struct JSONPropertyTests {
  @Test("serialize then parse is the identity on random values", arguments: [1 as UInt64, 2, 3, 42, 2026])
  func serializeParseIdentity(seed: UInt64) throws {
    var generator = RandomJSON(random: SeededGenerator(seed: seed))
    for iteration in 0..<300 {
      let value = generator.value(depth: 4)
      let compact = value.serialized()
      let parsed = try JSON(parsing: compact)
      #expect(parsed == value, "seed \(seed), iteration \(iteration): \(compact)")
      #expect(parsed.serialized() == compact, "seed \(seed), iteration \(iteration)")
      #expect(try JSON(parsing: value.serialized(pretty: true)) == value, "seed \(seed), iteration \(iteration)")
    }
  }
}

// MARK: - Strict object reading

@Suite("JSON object reader")
struct JSONObjectReaderTests {
  private func reader(_ text: String, context: String = "entities[0].attributes[2]") throws -> JSONObjectReader {
    try JSONObjectReader(try JSON(parsing: text), context: context)
  }

  @Test("names an unknown key and suggests the nearest allowed key")
  func unknownKeySuggestion() throws {
    let attribute = try reader(#"{"name": "age", "type": "int16", "optinal": true}"#)
    let allowed: Set<String> = ["name", "type", "optional", "default", "renamingIdentifier", "indexed"]
    #expect(
      throws: JSONReadError(
        context: "entities[0].attributes[2]", message: "unknown key 'optinal' (did you mean 'optional'?)")
    ) {
      try attribute.rejectUnknownKeys(allowed: allowed)
    }
    do {
      try attribute.rejectUnknownKeys(allowed: allowed)
    } catch {
      #expect(error.description == "entities[0].attributes[2]: unknown key 'optinal' (did you mean 'optional'?)")
    }
  }

  @Test("names the first unknown key in written order, without a far-fetched suggestion")
  func firstUnknownKey() throws {
    let object = try reader(#"{"zebra": 1, "nmae": 2}"#, context: "")
    #expect(throws: JSONReadError(context: "", message: "unknown key 'zebra'")) {
      try object.rejectUnknownKeys(allowed: ["name"])
    }
    let transposed = try reader(#"{"nmae": 2}"#, context: "")
    #expect(throws: JSONReadError(context: "", message: "unknown key 'nmae' (did you mean 'name'?)")) {
      try transposed.rejectUnknownKeys(allowed: ["name", "type"])
    }
    let known = try reader(#"{"name": 2}"#)
    try known.rejectUnknownKeys(allowed: ["name"])
  }

  @Test("refuses a value that is not an object")
  func notAnObject() {
    #expect(throws: JSONReadError(context: "entities[3]", message: "expected an object, found an array")) {
      try JSONObjectReader([1, 2], context: "entities[3]")
    }
  }

  @Test("reads required and optional members of each type")
  func typedMembers() throws {
    let object = try reader(
      #"{"name": "age", "nickname": null, "optional": true, "min": 3, "ratio": 0.5, "tags": ["a"], "inner": {"x": 1}}"#)
    #expect(try object.string("name") == "age")
    #expect(try object.optionalString("nickname") == nil)
    #expect(try object.optionalString("absent") == nil)
    #expect(try object.bool("optional", default: false) == true)
    #expect(try object.bool("absent", default: true) == true)
    #expect(try object.int("min") == 3)
    #expect(try object.optionalInt("absent") == nil)
    #expect(try object.optionalDouble("ratio") == 0.5)
    #expect(try object.optionalDouble("min") == 3)
    #expect(try object.array("tags") == ["a"])
    #expect(try object.array("absent") == [])
    #expect(object.optionalValue("nickname") == .null)
    #expect(object.optionalValue("absent") == nil)
    #expect(try object.object("inner").int("x") == 1)
    #expect(try object.object("inner").context == "entities[0].attributes[2].inner")
    #expect(try object.optionalObject("absent") == nil)
    #expect(object.keys == ["name", "nickname", "optional", "min", "ratio", "tags", "inner"])
  }

  @Test("says which key is missing or of the wrong type")
  func memberErrors() throws {
    let object = try reader(#"{"name": 5, "optional": "yes", "min": 1.5, "tags": {}, "inner": []}"#, context: "m")
    #expect(throws: JSONReadError(context: "m", message: "missing required key 'type'")) { try object.string("type") }
    #expect(throws: JSONReadError(context: "m", message: "key 'name' must be a string, found an integer")) {
      try object.string("name")
    }
    #expect(throws: JSONReadError(context: "m", message: "key 'optional' must be true or false, found a string")) {
      try object.bool("optional", default: false)
    }
    #expect(throws: JSONReadError(context: "m", message: "key 'min' must be an integer, found a number")) {
      try object.int("min")
    }
    #expect(throws: JSONReadError(context: "m", message: "missing required key 'max'")) { try object.int("max") }
    #expect(throws: JSONReadError(context: "m", message: "key 'tags' must be an array, found an object")) {
      try object.array("tags")
    }
    #expect(throws: JSONReadError(context: "m", message: "key 'inner' must be an object, found an array")) {
      try object.object("inner")
    }
  }

  @Test("gives each element of an array of objects its own context")
  func elementContexts() throws {
    let model = try reader(#"{"entities": [{"name": "A"}, {"nam": "B"}]}"#, context: "")
    let entities = try model.objects("entities")
    #expect(entities.map(\.context) == ["entities[0]", "entities[1]"])
    #expect(throws: JSONReadError(context: "entities[1]", message: "missing required key 'name'")) {
      try entities[1].string("name")
    }
    let mixed = try reader(#"{"entities": [{}, 3]}"#, context: "model")
    #expect(throws: JSONReadError(context: "model.entities[1]", message: "expected an object, found an integer")) {
      try mixed.objects("entities")
    }
  }

  @Test("measures edit distance with transpositions")
  func editDistance() {
    #expect(Spelling.distance(Array("optinal"), Array("optional")) == 1)
    #expect(Spelling.distance(Array("nmae"), Array("name")) == 1)
    #expect(Spelling.distance(Array(""), Array("abc")) == 3)
    #expect(Spelling.distance(Array("kitten"), Array("sitting")) == 3)
    #expect(Spelling.nearest(to: "tpye", among: ["type", "name"]) == "type")
    #expect(Spelling.nearest(to: "to", among: ["at"]) == nil)
  }
}
