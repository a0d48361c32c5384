import Foundation
import TestSupport
import Testing

@testable import EventGraph
@testable import EventGraphMigration

/// Lightweight migration: no mapping at all, everything inferred from names, renaming
/// identifiers and widening types — and, for what cannot be inferred, a refusal before
/// anything is written.
@Suite("Inferred (lightweight) migration")
struct InferredMigrationTests {
  static let libraryV1 = """
    {"name": "Library", "version": 1, "entities": [
      {"name": "Book",
       "attributes": [
         {"name": "title", "type": "string"},
         {"name": "pages", "type": "int16"},
         {"name": "copies", "type": "int32", "optional": true},
         {"name": "subtitle", "type": "string", "optional": true},
         {"name": "legacyCode", "type": "string", "optional": true},
         {"name": "note", "type": "string", "optional": true}],
       "relationships": [
         {"name": "shelf", "destination": "Shelf", "optional": true, "inverse": "books"},
         {"name": "author", "destination": "Author", "optional": true, "inverse": "books"}]},
      {"name": "Shelf",
       "attributes": [{"name": "label", "type": "string"}],
       "relationships": [{"name": "books", "destination": "Book", "toMany": true, "inverse": "shelf"}]},
      {"name": "Author",
       "attributes": [{"name": "name", "type": "string"}],
       "relationships": [{"name": "books", "destination": "Book", "toMany": true, "inverse": "author"}]}
    ]}
    """
  /// Book → Volume (entity rename), subtitle → strap (attribute rename), pages int16 →
  /// int32 and copies int32 → int64 (widening), legacyCode and the author relationships
  /// removed, rating added (optional), format added (with a default), note made required
  /// with a default, Author → Writer.
  static let libraryV2 = """
    {"name": "Library", "version": 2, "entities": [
      {"name": "Volume", "renamingIdentifier": "Book",
       "attributes": [
         {"name": "title", "type": "string"},
         {"name": "pages", "type": "int32"},
         {"name": "copies", "type": "int64", "optional": true},
         {"name": "strap", "type": "string", "optional": true, "renamingIdentifier": "subtitle"},
         {"name": "note", "type": "string", "default": "none"},
         {"name": "rating", "type": "int16", "optional": true},
         {"name": "format", "type": "string", "default": "paper"}],
       "relationships": [
         {"name": "shelf", "destination": "Shelf", "optional": true, "inverse": "books"}]},
      {"name": "Shelf",
       "attributes": [{"name": "label", "type": "string"}],
       "relationships": [{"name": "books", "destination": "Volume", "toMany": true, "inverse": "shelf"}]},
      {"name": "Writer", "renamingIdentifier": "Author",
       "attributes": [{"name": "name", "type": "string"}]}
    ]}
    """
  /// pages widens once more, int32 → int64; Volume and Writer keep the renaming identifiers
  /// of the earlier rename, as a Core Data model would.
  static let libraryV3 = libraryV2.replacingOccurrences(of: "\"version\": 2", with: "\"version\": 3")
    .replacingOccurrences(
      of: "{\"name\": \"pages\", \"type\": \"int32\"}", with: "{\"name\": \"pages\", \"type\": \"int64\"}")

  static func history(_ store: EventStore, seed: UInt64, commits: Int) throws {
    var g = SeededGenerator(seed: seed)
    var books: [ObjectID] = []
    var shelves: [ObjectID] = []
    var authors: [ObjectID] = []
    for i in 0..<commits {
      try store.write(time: historyTime(i)) { tx in
        for _ in 0..<g.int(1...3) {
          switch g.int(0...9) {
          case 0: shelves.append(try tx.insert("Shelf", ["label": .string(g.pick(["A", "B"]))]))
          case 1: authors.append(try tx.insert("Author", ["name": .string(g.pick(["Ōe", "Mishima"]))]))
          case 2...3:
            let b = try tx.insert(
              "Book",
              [
                "title": .string(g.pick(["Kokoro", "Snow Country"])), "pages": .int16(Int16(g.int(-32768...32767))),
                "copies": g.chance(0.5) ? .int32(Int32(g.int(-2_000_000_000...2_000_000_000))) : nil,
                "subtitle": g.chance(0.5) ? .string("a novel") : nil, "legacyCode": .string("x"),
                "note": g.chance(0.5) ? .string("signed") : nil,
              ])
            if !shelves.isEmpty && g.chance(0.7) { try tx.setRelationship(b, "shelf", to: g.pick(shelves)) }
            if !authors.isEmpty && g.chance(0.7) { try tx.setRelationship(b, "author", to: g.pick(authors)) }
            books.append(b)
          case 4 where !books.isEmpty: try tx.set(g.pick(books), "note", g.chance(0.5) ? nil : .string("worn"))
          case 5 where !books.isEmpty: try tx.set(g.pick(books), "subtitle", g.chance(0.5) ? nil : .string("ii"))
          case 6 where !books.isEmpty && !shelves.isEmpty:
            try tx.setRelationship(g.pick(books), "shelf", to: g.chance(0.3) ? nil : g.pick(shelves))
          case 7 where !books.isEmpty: try tx.set(g.pick(books), "pages", .int16(Int16(g.int(0...999))))
          case 8 where !books.isEmpty:
            let b = g.pick(books)
            try tx.delete(b)
            books.removeAll { $0 == b }
          case 9 where !shelves.isEmpty:
            let s = g.pick(shelves)
            try tx.delete(s)
            shelves.removeAll { $0 == s }
          default: shelves.append(try tx.insert("Shelf", ["label": .string("C")]))
          }
        }
      }
    }
  }

  @Test("renames, widenings, added and removed properties, optional to required with a default")
  func lightweight() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/library"
    var ids: [String: ObjectID] = [:]
    do {
      let store = try EventStore.create(at: path, model: try model(Self.libraryV1))
      try store.write { tx in
        let shelf = try tx.insert("Shelf", ["label": .string("A")])
        let author = try tx.insert("Author", ["name": .string("Sōseki")])
        let kokoro = try tx.insert(
          "Book",
          [
            "title": .string("Kokoro"), "pages": .int16(-32768), "copies": .int32(2_000_000_000),
            "subtitle": .string("a novel"), "legacyCode": .string("K-1"), "note": .string("signed"),
          ])
        let botchan = try tx.insert("Book", ["title": .string("Botchan"), "pages": .int16(32767)])
        try tx.setRelationship(kokoro, "shelf", to: shelf)
        try tx.setRelationship(kokoro, "author", to: author)
        try tx.setRelationship(botchan, "author", to: author)
        ids = ["shelf": shelf, "author": author, "kokoro": kokoro, "botchan": botchan]
      }
    }
    let report = try EventStore.upcast(at: path, to: try model(Self.libraryV2), mapping: nil).report
    #expect(report.switched)
    do {
      let store = try EventStore(path: path)
      #expect(store.model.version == 2)
      try store.read { s throws in
        let kokoro = try #require(ids["kokoro"])
        let botchan = try #require(ids["botchan"])
        #expect(try s.entity(of: kokoro).name == "Volume")
        #expect(try s.entity(of: try #require(ids["author"])).name == "Writer")
        #expect(try s.value(kokoro, "title") == .string("Kokoro"))
        #expect(try s.value(kokoro, "pages") == .int32(-32768))
        #expect(try s.value(kokoro, "copies") == .int64(2_000_000_000))
        #expect(try s.value(kokoro, "strap") == .string("a novel"))
        #expect(try s.value(kokoro, "note") == .string("signed"))
        #expect(try s.value(kokoro, "rating") == nil)
        #expect(try s.value(kokoro, "format") == .string("paper"))
        #expect(try s.related(kokoro, "shelf") == [try #require(ids["shelf"])])
        #expect(try s.related(try #require(ids["shelf"]), "books") == [kokoro])
        #expect(try s.value(botchan, "pages") == .int32(32767))
        #expect(try s.value(botchan, "copies") == nil)
        #expect(try s.value(botchan, "strap") == nil)
        // Optional → required with a default: the missing value takes the default.
        #expect(try s.value(botchan, "note") == .string("none"))
        #expect(try s.record(kokoro).attributes.map(\.name) == ["title", "pages", "copies", "strap", "note", "format"])
      }
      #expect(try store.verify().isOK)
    }
    // And on to v3: int16 → int32 → int64.
    _ = try EventStore.upcast(at: path, to: try model(Self.libraryV3), mapping: nil)
    do {
      let store = try EventStore(path: path)
      #expect(store.model.version == 3)
      #expect(try store.read { s in try s.value(try #require(ids["kokoro"]), "pages") } == .int64(-32768))
      #expect(try store.read { s in try s.value(try #require(ids["botchan"]), "note") } == .string("none"))
      #expect(try store.read { try $0.objects(of: "Writer").count } == 1)
    }
    // Back to v2, then to v1: each version's data is still there.
    #expect(try EventStore.rollback(at: path) == 2)
    #expect(try EventStore.rollback(at: path) == 1)
    #expect(
      try EventStore(path: path).read { s in try s.value(try #require(ids["kokoro"]), "legacyCode") } == .string("K-1"))
  }

  @Test("an inferred migration commutes with the mapping on random histories", arguments: stressSeeds([41, 42]))
  func inferredCommutes(seed: UInt64) throws {
    try checkCommutation(
      v1: try model(Self.libraryV1), v2: try model(Self.libraryV2), mapping: nil,
      kept: [("Book", "Volume"), ("Shelf", "Shelf"), ("Author", "Writer")]
    ) { store in
      try Self.history(store, seed: seed, commits: 30)
    }
  }

  // MARK: - Refusals

  struct Refusal: Sendable, CustomStringConvertible {
    var description: String
    /// Replaces text of libraryV2.
    var change: (String, String)
    /// What the error must name.
    var names: [String]
  }

  static let refusals: [Refusal] = [
    Refusal(
      description: "a new required attribute without a default",
      change: (
        "{\"name\": \"rating\", \"type\": \"int16\", \"optional\": true}", "{\"name\": \"rating\", \"type\": \"int16\"}"
      ),
      names: ["Volume", "rating"]),
    Refusal(
      description: "a narrowing type change (int32 to int16)",
      change: (
        "{\"name\": \"copies\", \"type\": \"int64\", \"optional\": true}",
        "{\"name\": \"copies\", \"type\": \"int16\", \"optional\": true}"
      ),
      names: ["Volume", "copies"]),
    Refusal(
      description: "a number becoming a string",
      change: ("{\"name\": \"pages\", \"type\": \"int32\"}", "{\"name\": \"pages\", \"type\": \"string\"}"),
      names: ["Volume", "pages"]),
  ]

  @Test(
    "what cannot be inferred is refused before anything is written, naming entity and property", arguments: refusals)
  func refusal(_ r: Refusal) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/library"
    do {
      let store = try EventStore.create(at: path, model: try model(Self.libraryV1))
      try Self.history(store, seed: 3, commits: 10)
    }
    let v2Text = Self.libraryV2.replacingOccurrences(of: r.change.0, with: r.change.1)
    #expect(v2Text != Self.libraryV2)
    let before = try dumpEverything(at: path)
    let error = try #require(throws: MappingError.self) {
      try EventStore.upcast(at: path, to: try model(v2Text), mapping: nil)
    }
    for name in r.names { #expect(error.description.contains(name), "\(error) does not name \(name)") }
    #expect(try dumpEverything(at: path) == before, "the refusal wrote something")
    #expect(try EventStore(path: path).model.version == 1)
  }

  @Test(
    "a to-many relationship made to-one is refused: it would drop links",
    arguments: ["inferred", "entity", "relationship"])
  func toManyMadeToOne(mapped: String) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/library"
    do {
      let store = try EventStore.create(at: path, model: try model(Self.libraryV1))
      try store.write { tx in
        let author = try tx.insert("Author", ["name": .string("Sōseki")])
        for title in ["Kokoro", "Botchan"] {
          let b = try tx.insert("Book", ["title": .string(title), "pages": .int16(1)])
          try tx.setRelationship(b, "author", to: author)
        }
      }
    }
    // Author.books (to-many) becomes a to-one, its inverse Book.author stays to-one.
    let v2 = Self.libraryV1.replacingOccurrences(of: "\"version\": 1", with: "\"version\": 2")
      .replacingOccurrences(
        of: "{\"name\": \"books\", \"destination\": \"Book\", \"toMany\": true, \"inverse\": \"author\"}",
        with: "{\"name\": \"books\", \"destination\": \"Book\", \"optional\": true, \"inverse\": \"author\"}")
    #expect(v2.contains("\"optional\": true, \"inverse\": \"author\""))
    // With no mapping, with a mapping that names Author but not its relationship, or with
    // a relationship mapping whose sources are a collection.
    var m: MappingModel? = nil
    if mapped != "inferred" {
      var author = EntityMapping(
        name: "AuthorToAuthor", source: "Author", destination: "Author", attributes: ["name": "uppercase($source.name)"]
      )
      if mapped == "relationship" {
        author.relationships["books"] = RelationshipMapping(mapping: "BookToBook", sources: "$source.books")
      }
      m = MappingModel(source: 1, destination: 2, entityMappings: [author])
    }
    let before = try dumpEverything(at: path)
    let error = try #require(throws: MappingError.self) {
      try EventStore.upcast(at: path, to: try model(v2), mapping: m)
    }
    #expect(error.description.contains("Author") && error.description.contains("books"), "\(error)")
    #expect(try dumpEverything(at: path) == before)
  }

  @Test("optional to required without a default is refused, or fails naming the object, leaving v1 intact")
  func optionalToRequiredWithoutDefault() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/library"
    do {
      let store = try EventStore.create(at: path, model: try model(Self.libraryV1))
      try store.write { tx in _ = try tx.insert("Book", ["title": .string("Botchan"), "pages": .int16(1)]) }
    }
    let v2 = Self.libraryV2.replacingOccurrences(
      of: "{\"name\": \"note\", \"type\": \"string\", \"default\": \"none\"}",
      with: "{\"name\": \"note\", \"type\": \"string\"}")
    let export = try exportLines(at: path)
    let v1Bytes = try dumpDatabases(at: path, versionDatabases(1))
    #expect(throws: (any Error).self) { try EventStore.upcast(at: path, to: try model(v2), mapping: nil) }
    do {
      let store = try EventStore(path: path)
      #expect(store.model.version == 1)
      #expect(try exportLines(store) == export)
      #expect(try dumpDatabases(store, versionDatabases(1)) == v1Bytes)
    }
  }
}
