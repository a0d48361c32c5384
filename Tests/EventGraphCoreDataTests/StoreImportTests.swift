import EventGraph
import Foundation
import Testing

@testable import EventGraphCoreData

@Suite("Core Data store import")
struct StoreImportTests {
  func export(_ path: String) throws -> [String] {
    var lines: [String] = []
    try EventStore(path: path, options: StoreOptions(readOnly: true)).export { lines.append($0) }
    return lines
  }

  @Test("TavantTrade's SQLite store: 19 categories and 79 subcategories, each subcategory under its category")
  func tavantTrade() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    var ids: [String: String] = [:]
    let result = try CoreDataStoreImport.run(
      store: dir + "/t", model: Fixtures.tavant, file: Fixtures.path("TavantTrade/Model.sqlite")
    ) { ids[$0] = $1 }
    #expect(result.objects == ["FeedbackCategory": 19, "FeedbackSubCategory": 79])
    #expect(result.created && result.skipped.isEmpty && result.notes.isEmpty)
    let lines = try export(dir + "/t")
    #expect(lines.count == 98)
    // Row 1 of ZFEEDBACKSUBCATEGORY: 'Discrepancy in limits', ZCATEGORY 15 ('Online Trading' … as the file has it).
    let sub = try #require(ids["FeedbackSubCategory/p1"])
    let category = try #require(ids["FeedbackCategory/p15"])
    #expect(
      lines.contains(
        #"{"id": "\#(sub)", "entity": "FeedbackSubCategory", "attributes": {"name": "Discrepancy in limits"}, "relationships": {"category": "\#(category)"}}"#
      ))
    let first = try #require(ids["FeedbackCategory/p1"])
    #expect(
      lines.contains {
        $0.hasPrefix(#"{"id": "\#(first)", "entity": "FeedbackCategory", "attributes": {"name": "Settlement"}"#)
      })
    // Importing the same Core Data store again writes nothing.
    let again = try CoreDataStoreImport.run(
      store: dir + "/t", model: Fixtures.tavant, file: Fixtures.path("TavantTrade/Model.sqlite"))
    #expect(again.alreadyImported)
    #expect(try export(dir + "/t") == lines)
  }

  @Test("the seed's XML store: the three people with their phones, read with version 1")
  func myMigrationXML() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    var ids: [String: String] = [:]
    let result = try CoreDataStoreImport.run(
      store: dir + "/b", model: Fixtures.myMigration, file: Fixtures.path("MyMigration/v1_storedata")
    ) { ids[$0] = $1 }
    #expect(result.version == 1)
    #expect(ids == ["z102": "AddressBook/1", "z103": "AddressBook/2", "z104": "AddressBook/3"])
    #expect(
      try export(dir + "/b") == [
        #"{"id": "AddressBook/1", "entity": "AddressBook", "attributes": {"addr1": "浦島", "addr2": "3丁目", "age": 110, "firstName": "浦島", "lastName": "太郎", "phone2": "090-1234-5678", "sex": 1, "zipcode": "1234567"}}"#,
        #"{"id": "AddressBook/2", "entity": "AddressBook", "attributes": {"addr1": "鬼ヶ島", "addr2": "一丁目", "age": 10, "firstName": "桃", "lastName": "太郎", "phone1": "123-4567-7891", "phone2": "090-111-9999", "sex": 1, "zipcode": "1234567"}}"#,
        #"{"id": "AddressBook/3", "entity": "AddressBook", "attributes": {"addr1": "京都", "addr2": "四条河原", "age": 20, "firstName": "一寸", "lastName": "法師", "sex": 1, "zipcode": "001001"}}"#,
      ])
  }

  @Test("a built store: inheritance through Z_ENT, a sibling's ZPAGES1, Z_FOK_ order, a join table, dates and booleans")
  func builtStore() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (model, file) = try BuiltStores.make(in: dir)
    var ids: [String: String] = [:]
    let result = try CoreDataStoreImport.run(store: dir + "/s", model: model, file: file, options: .init(batch: 2)) {
      ids[$0] = $1
    }
    #expect(result.objects == ["Book": 2, "Magazine": 1, "Shelf": 1, "Tag": 2])
    #expect(result.notes == ["table ZSHELF: columns the model does not know, ignored: ZLEGACY"])
    #expect(result.commits > 1)
    #expect(ids["Shelf/p1"] == "Shelf/1" && ids["Book/p2"] == "Book/2" && ids["Magazine/p3"] == "Magazine/3")
    #expect(ids["Book/p1"] == "Book/4")
    #expect(
      try export(dir + "/s") == [
        #"{"id": "Shelf/1", "entity": "Shelf", "attributes": {"label": "A-1"}, "relationships": {"items": ["Book/2", "Magazine/3", "Book/4"]}}"#,
        #"{"id": "Book/2", "entity": "Book", "attributes": {"added": "2001-01-02T00:00:00.500Z", "title": "Kaguya", "lent": false}, "relationships": {"shelf": "Shelf/1"}}"#,
        #"{"id": "Magazine/3", "entity": "Magazine", "attributes": {"title": "Oni Monthly", "pages": 70000, "price": "3.5"}, "relationships": {"shelf": "Shelf/1", "tags": ["Tag/5"]}}"#,
        #"{"id": "Book/4", "entity": "Book", "attributes": {"added": "2001-01-01T00:00:00.000Z", "title": "Momotaro", "lent": true, "pages": 32}, "relationships": {"shelf": "Shelf/1", "tags": ["Tag/5", "Tag/6"]}}"#,
        #"{"id": "Tag/5", "entity": "Tag", "attributes": {"name": "kids"}, "relationships": {"items": ["Magazine/3", "Book/4"]}}"#,
        #"{"id": "Tag/6", "entity": "Tag", "attributes": {"name": "old"}, "relationships": {"items": ["Book/4"]}}"#,
      ])
  }

  @Test(
    "rows that break the model are refused with table and Z_PK, nothing created; --lenient skips them",
    arguments: [
      ("INSERT INTO ZITEM VALUES (4, 2, 1, 99, 4, NULL, 'Lost', 0, NULL, NULL, NULL);", "table ZITEM Z_PK 4: ZSHELF"),
      (
        "INSERT INTO ZITEM VALUES (4, 2, 1, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL);",
        "table ZITEM Z_PK 4: ZTITLE: NULL"
      ),
      (
        "INSERT INTO ZITEM VALUES (4, 2, 1, NULL, NULL, NULL, 'Big', 0, 70000, NULL, NULL);",
        "70000 does not fit Integer 16"
      ),
      (
        "INSERT INTO ZITEM VALUES (4, 1, 1, NULL, NULL, NULL, 'Abstract', 0, NULL, NULL, NULL);", "abstract entity Item"
      ),
      ("INSERT INTO ZITEM VALUES (4, 2, 1, NULL, NULL, NULL, 'Yes?', 2, NULL, NULL, NULL);", "2 is not a boolean"),
      ("INSERT INTO Z_1TAGS VALUES (2, 9);", "table Z_1TAGS row (Z_1ITEMS 2, Z_5TAGS 9)"),
    ])
  func badRows(_ bad: (String, String)) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (model, file) = try BuiltStores.make(in: dir, extra: bad.0)
    #expect {
      try CoreDataStoreImport.run(store: dir + "/s", model: model, file: file)
    } throws: { error in
      "\(error)".contains(bad.1) && "\(error)".contains("Shelves.sqlite")
        && (error as? CoreDataError)?.remedy == .lenient
    }
    #expect(!FileManager.default.fileExists(atPath: dir + "/s"))
    let result = try CoreDataStoreImport.run(store: dir + "/s", model: model, file: file, options: .init(lenient: true))
    #expect(result.skipped.count == 1 && result.skipped[0].contains(bad.1))
    #expect(result.objects.values.reduce(0, +) == 6)
  }

  @Test("a store matches no version when a table or column is missing, or its metadata names other entities")
  func noVersion() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (model, file) = try BuiltStores.make(in: dir, extra: "ALTER TABLE ZTAG RENAME COLUMN ZNAME TO ZLABEL;")
    #expect {
      try CoreDataStoreImport.run(store: dir + "/s", model: model, file: file)
    } throws: { error in
      "\(error)".contains("matches no version") && "\(error)".contains("table ZTAG has no column ZNAME")
    }
    // Z_METADATA naming another model's entities (an XML plist here; Core Data writes binary).
    let other = dir + "/other"
    try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
    let (_, named) = try BuiltStores.make(
      in: other,
      extra: """
        INSERT INTO Z_METADATA VALUES (1, 'U', CAST('<plist version="1.0"><dict><key>NSStoreModelVersionHashes</key>\
        <dict><key>Person</key><data>AA==</data></dict></dict></plist>' AS BLOB));
        """)
    #expect {
      try CoreDataStoreImport.run(store: dir + "/s", model: model, file: named)
    } throws: { error in
      "\(error)".contains("matches no version") && "\(error)".contains("Z_METADATA's model names the entities Person")
    }
    #expect {
      try CoreDataStoreImport.run(
        store: dir + "/s", model: Fixtures.myMigration, file: Fixtures.path("TavantTrade/Model.sqlite"))
    } throws: { error in
      "\(error)".contains("matches no version") && "\(error)".contains("FeedbackCategory")
    }
    #expect(!FileManager.default.fileExists(atPath: dir + "/s"))
  }

  @Test("a store another connection holds locked is refused as locked, and no store is made")
  func locked() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (model, file) = try BuiltStores.make(in: dir)
    let writer = try SQLiteDatabase(writing: file)
    try writer.execute("BEGIN EXCLUSIVE; UPDATE ZTAG SET ZNAME = 'x';")
    #expect {
      try CoreDataStoreImport.run(store: dir + "/s", model: model, file: file)
    } throws: { error in
      "\(error)".contains("Shelves.sqlite") && "\(error)".contains("database is locked")
    }
    #expect(!FileManager.default.fileExists(atPath: dir + "/s"))
    try writer.execute("ROLLBACK;")
    #expect(try CoreDataStoreImport.run(store: dir + "/s", model: model, file: file).objects["Tag"] == 2)
  }

  @Test("an XML store with relationships: both sides written once, an ordered to-many in its idrefs' order")
  func xmlRelationships() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (model, _) = try BuiltStores.make(in: dir)
    try BuiltStores.xml.write(toFile: dir + "/shelves.xml", atomically: true, encoding: .utf8)
    var ids: [String: String] = [:]
    let result = try CoreDataStoreImport.run(store: dir + "/s", model: model, file: dir + "/shelves.xml") {
      ids[$0] = $1
    }
    #expect(result.objects == ["Book": 1, "Magazine": 1, "Shelf": 1, "Tag": 1])
    #expect(ids == ["z102": "Book/1", "z103": "Magazine/2", "z104": "Shelf/3", "z105": "Tag/4"])
    #expect(
      try export(dir + "/s") == [
        #"{"id": "Book/1", "entity": "Book", "attributes": {"added": "2001-01-01T00:00:00.000Z", "title": "Momotaro", "lent": true, "pages": 32}, "relationships": {"shelf": "Shelf/3", "tags": ["Tag/4"]}}"#,
        #"{"id": "Magazine/2", "entity": "Magazine", "attributes": {"title": "Oni Monthly", "price": "3.5"}, "relationships": {"shelf": "Shelf/3"}}"#,
        #"{"id": "Shelf/3", "entity": "Shelf", "attributes": {"label": "A-1"}, "relationships": {"items": ["Magazine/2", "Book/1"]}}"#,
        #"{"id": "Tag/4", "entity": "Tag", "attributes": {"name": "kids"}, "relationships": {"items": ["Book/1"]}}"#,
      ])
  }

  @Test("an entity renamed through its renaming identifier, in a store that still names it by the old name, is read")
  func renamedEntity() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (model, file) = try BuiltStores.make(in: dir)
    // The model of a later version: Shelf renamed Rack, with Shelf as its renaming identifier;
    // the store, never migrated, keeps Z_PRIMARYKEY's 'Shelf' and the table ZSHELF.
    let renamed = BuiltStores.modelXML
      .replacingOccurrences(
        of: #"<entity name="Shelf" syncable="YES">"#, with: #"<entity name="Rack" elementID="Shelf" syncable="YES">"#
      )
      .replacingOccurrences(
        of: #"destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf""#,
        with: #"destinationEntity="Rack" inverseName="items" inverseEntity="Rack""#)
    #expect(renamed.contains("Rack") && !renamed.contains(#"name="Shelf""#))
    try renamed.write(toFile: model + "/contents", atomically: true, encoding: .utf8)
    var ids: [String: String] = [:]
    let result = try CoreDataStoreImport.run(store: dir + "/s", model: model, file: file) { ids[$0] = $1 }
    #expect(result.objects == ["Book": 2, "Magazine": 1, "Rack": 1, "Tag": 2])
    #expect(result.notes.contains { $0.contains("entity Rack: the store names it Shelf") }, "\(result.notes)")
    let lines = try export(dir + "/s")
    let rack = try #require(lines.first { $0.contains(#""entity": "Rack""#) })
    #expect(rack.contains(#""label": "A-1""#) && rack.contains(#""items": ["#))
  }

  @Test("strict: a store whose reading would leave something out is refused before anything is written")
  func strictStore() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    // The built store has a column the model does not know (ZSHELF.ZLEGACY): a note.
    let (model, file) = try BuiltStores.make(in: dir)
    #expect {
      try CoreDataStoreImport.run(store: dir + "/s", model: model, file: file, options: .init(strict: true))
    } throws: { "\($0)".contains("strict:") && "\($0)".contains("ZLEGACY") }
    #expect(!FileManager.default.fileExists(atPath: dir + "/s"))
  }

  /// A one-entity XML model bundle at `dir/NAME.xcdatamodel`.
  func bundle(_ dir: String, _ name: String, entity: String, attribute: String) throws -> String {
    let path = dir + "/\(name).xcdatamodel"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    try
      #"<?xml version="1.0"?><model><entity name="\#(entity)"><attribute name="\#(attribute)" attributeType="String"/></entity></model>"#
      .write(toFile: path + "/contents", atomically: true, encoding: .utf8)
    return path
  }

  @Test("a store opened with a model merged from two bundles is read with their current versions merged")
  func mergedModels() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let notes = try bundle(dir, "Notes", entity: "Note", attribute: "text")
    let labels = try bundle(dir, "Labels", entity: "Label", attribute: "name")
    let file = dir + "/App.sqlite"
    try SQLiteDatabase(writing: file).execute(
      """
      CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
      INSERT INTO Z_PRIMARYKEY VALUES (1, 'Label', 0, 2), (2, 'Note', 0, 1);
      CREATE TABLE ZLABEL (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR);
      CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTEXT VARCHAR);
      INSERT INTO ZLABEL VALUES (1, 1, 1, 'home'), (2, 1, 1, 'work');
      INSERT INTO ZNOTE VALUES (1, 2, 1, 'buy milk');
      """)
    // One bundle alone does not fit the store.
    #expect(throws: CoreDataError.self) { try CoreDataStoreImport.run(store: dir + "/one", model: notes, file: file) }
    let result = try CoreDataStoreImport.run(store: dir + "/s", models: [notes, labels], file: file)
    #expect(result.objects == ["Label": 2, "Note": 1])
    #expect(result.versionName == "merged (Notes, Labels)")
    #expect(try export(dir + "/s").contains { $0.contains(#""text": "buy milk""#) })
    // Two bundles that both define an entity are refused, naming both.
    let twice = try bundle(dir + "/other", "Notes", entity: "Note", attribute: "body")
    #expect {
      try CoreDataStoreImport.run(store: dir + "/t", models: [notes, twice], file: file)
    } throws: { "\($0)".contains("entity Note is in both") && "\($0)".contains(twice) }
    #expect(!FileManager.default.fileExists(atPath: dir + "/t"))
  }
}
