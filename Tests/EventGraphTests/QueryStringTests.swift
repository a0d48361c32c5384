import Foundation
import Testing

@testable import EventGraph

/// Whether `text` holds for a `Sample` whose `s` is `value`.
private func stringHolds(_ text: String, _ value: String, t: String? = nil) throws -> Bool {
  let objects = QueryMemoryObjects()
  let o = objects.insert("Sample", ["s": .string(value), "t": t.map { .string($0) }])
  return try queryHolds(text, on: o, in: objects)
}

@Suite("Query evaluation: strings")
struct QueryStringTests {
  @Test(
    "string operators on ASCII text",
    arguments: [
      ("s == 'Tanaka'", true), ("s == 'tanaka'", false), ("s ==[c] 'tanaka'", true), ("s !=[c] 'TANAKA'", false),
      ("s BEGINSWITH 'Ta'", true), ("s BEGINSWITH 'ta'", false), ("s BEGINSWITH[c] 'ta'", true),
      ("s BEGINSWITH ''", true), ("s BEGINSWITH 'Tanakaa'", false), ("s ENDSWITH 'ka'", true),
      ("s ENDSWITH[c] 'KA'", true), ("s ENDSWITH 'Ka'", false), ("s CONTAINS 'nak'", true),
      ("s CONTAINS[c] 'NAK'", true), ("s CONTAINS 'x'", false), ("s CONTAINS ''", true), ("s CONTAINS s", true),
      ("s < 'Tb'", true), ("s > 'Ta'", true), ("s < 'a'", true), ("s <[c] 'tb'", true), ("s >=[c] 'TANAKA'", true),
      ("s BETWEEN {'T', 'U'}", true), ("s BETWEEN[c] {'t', 'u'}", true), ("s IN {'Tanaka', 'Sato'}", true),
      ("s IN {'tanaka'}", false), ("s IN[c] {'tanaka'}", true), ("s == concat('Tana', 'ka')", true),
    ])
  func ascii(text: String, expected: Bool) throws {
    #expect(try stringHolds(text, "Tanaka") == expected)
  }

  @Test(
    "LIKE matches the whole string with * and ?",
    arguments: [
      ("s LIKE 'Tanaka'", true), ("s LIKE 'T*a'", true), ("s LIKE 'T?n*'", true), ("s LIKE 't*'", false),
      ("s LIKE[c] 't*'", true), ("s LIKE '*'", true), ("s LIKE '*k*'", true), ("s LIKE 'Tanak?'", true),
      ("s LIKE 'Tanaka?'", false), ("s LIKE '?anaka'", true), ("s LIKE 'Ta'", false), ("s LIKE '**a'", true),
      ("s LIKE '*n*n*'", false), ("s LIKE '*a*a*a'", true), ("s LIKE ''", false), ("s LIKE t", true),
    ])
  func like(text: String, expected: Bool) throws {
    #expect(try stringHolds(text, "Tanaka", t: "T*k?") == expected)
  }

  @Test("a backslash in a LIKE pattern makes * and ? literal")
  func likeEscapes() throws {
    #expect(try stringHolds(#"s LIKE 'a\\*b'"#, "a*b"))
    #expect(try stringHolds(#"s LIKE 'a\\*b'"#, "axb") == false)
    #expect(try stringHolds(#"s LIKE 'a\\?'"#, "a?"))
    #expect(try stringHolds(#"s LIKE 'a\\?'"#, "ab") == false)
  }

  @Test(
    "MATCHES is a regular expression over the whole string",
    arguments: [
      ("s MATCHES 'T[a-z]+'", true), ("s MATCHES 'T[a-z]'", false), ("s MATCHES 'an'", false),
      ("s MATCHES '.*an.*'", true), ("s MATCHES 'Ta|Tanaka'", true), ("s MATCHES 'tanaka'", false),
      ("s MATCHES[c] 'tanaka'", true), ("s MATCHES 'Tanaka\\n?'", true), ("s MATCHES '(?i)TANAKA'", true),
      ("s MATCHES t", true),
    ])
  func matches(text: String, expected: Bool) throws {
    #expect(try stringHolds(text, "Tanaka", t: "[A-Z]a.*") == expected)
  }

  @Test("MATCHES does not match a string with a trailing newline unless the pattern does")
  func matchesWholeString() throws {
    #expect(try stringHolds("s MATCHES 'abc'", "abc\n") == false)
    #expect(try stringHolds("s MATCHES 'abc\\n'", "abc\n"))
  }

  @Test("a MATCHES pattern computed at evaluation that is not a regular expression is an error")
  func computedBadPattern() {
    let error = queryError { _ = try stringHolds("s MATCHES t", "x", t: "(") }
    #expect(error?.kind == .invalidRegularExpression)
  }

  @Test(
    "[c] and [d] fold case and diacritics the Unicode way",
    arguments: [
      ("É", "s ==[cd] 'e'", true), ("É", "s ==[c] 'é'", true), ("É", "s ==[d] 'E'", true), ("É", "s == 'E'", false),
      ("É", "s ==[c] 'e'", false), ("É", "s ==[d] 'e'", false), ("École", "s BEGINSWITH[cd] 'eco'", true),
      ("École", "s BEGINSWITH[c] 'eco'", false), ("naïve café", "s CONTAINS[d] 'cafe'", true),
      ("naïve café", "s LIKE[cd] 'NAIVE*'", true), ("naïve café", "s ENDSWITH[cd] 'E'", true),
      ("Élan", "s MATCHES[d] 'Elan'", true), ("Élan", "s MATCHES[cd] 'elan'", true),
      ("Élan", "s MATCHES 'Elan'", false),
      ("straße", "s ==[c] 'STRASSE'", true), ("straße", "s == 'strasse'", false),
      ("straße", "s BEGINSWITH[c] 'STRAS'", true),
      ("straße", "s CONTAINS[c] 'SS'", true), ("straße", "s LIKE[c] 'STRA*E'", true),
      ("STRASSE", "s ==[c] 'straße'", true),
      ("Straße", "s IN[c] {'STRASSE'}", true), ("ǅ", "s ==[c] 'ǆ'", true), ("ΣΑΣ", "s ==[c] 'σας'", true),
      ("Ｔａｎａｋａ", "s ==[c] 'ｔａｎａｋａ'", true), ("e\u{301}", "s ==[d] 'e'", true),
    ])
  func folding(value: String, text: String, expected: Bool) throws {
    #expect(try stringHolds(text, value) == expected)
  }

  @Test(
    "Japanese text",
    arguments: [
      ("s == '桃太郎'", true), ("s CONTAINS '太'", true), ("s BEGINSWITH '桃'", true), ("s ENDSWITH '郎'", true),
      ("s ENDSWITH '太'", false), ("s LIKE '桃?郎'", true), ("s LIKE '*太*'", true), ("s MATCHES '桃.郎'", true),
      ("s MATCHES '\\p{Han}+'", true), ("length(s) == 3", true), ("s ==[cd] '桃太郎'", true),
      ("s CONTAINS[cd] '太郎'", true), ("s < '桃太郎さん'", true), ("s IN {'金太郎', '桃太郎'}", true),
      ("uppercase(s) == s", true),
    ])
  func japanese(text: String, expected: Bool) throws {
    #expect(try stringHolds(text, "桃太郎") == expected)
  }

  @Test(
    "strings compare as characters, with canonical equivalence",
    arguments: [
      ("s == 'café'", true), ("s BEGINSWITH 'caf'", true), ("s BEGINSWITH 'cafe'", false),
      ("s ENDSWITH 'é'", true), ("s ENDSWITH 'e'", false), ("s CONTAINS 'fé'", true), ("s CONTAINS 'fe'", false),
      ("s LIKE 'caf?'", true), ("s LIKE 'cafe*'", false), ("length(s) == 4", true), ("s MATCHES 'caf.'", true),
      ("s MATCHES 'café'", true), ("s MATCHES 'cafe'", false), ("s MATCHES[d] 'cafe'", true),
    ])
  func canonicalEquivalence(text: String, expected: Bool) throws {
    // "café" with the accent as a combining mark; the literals are precomposed.
    #expect(try stringHolds(text, "cafe\u{301}") == expected)
  }

  @Test("a CR LF pair is one character")
  func crlf() throws {
    let value = "line1\r\nline2"
    #expect(try stringHolds("s BEGINSWITH 'line1'", value))
    #expect(try stringHolds("s BEGINSWITH 'line1\\r'", value) == false)
    #expect(try stringHolds("s CONTAINS '\\r\\n'", value))
    #expect(try stringHolds("s CONTAINS '1\\r'", value) == false)
    #expect(try stringHolds("s ENDSWITH '\\nline2'", value) == false)
    #expect(try stringHolds("s LIKE 'line1?line2'", value))
    #expect(try stringHolds("length(s) == 11", value))
  }

  @Test("string ordering is by Unicode scalars of the canonical form")
  func ordering() throws {
    #expect(try stringHolds("s < 'a'", "Z"))
    #expect(try stringHolds("s <[c] 'a'", "Z") == false)
    #expect(try stringHolds("s > 'e'", "é"))
    #expect(try stringHolds("s == 'é' AND s >= 'é' AND s <= 'é'", "e\u{301}"))
  }
}
