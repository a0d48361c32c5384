import Foundation

// MARK: - Core Data files: import-model, import-coredata, import-mapping

extension BadInput {
  static let coreDataCases: [BadInput] = modelImportCases + storeImportCases + mappingImportCases

  /// An `.xcdatamodel` directory whose `contents` is `text`.
  static func xcdatamodel(_ text: String) -> [String: FileKind] {
    ["m.xcdatamodel": .directory, "m.xcdatamodel/contents": .text(text)]
  }

  static func importModel(_ files: [String: FileKind], _ path: String, _ names: [String]) -> BadInput {
    bad(1, ["import-model", path, "--out", "@D/out"], names, files: files, absent: ["@D/out"])
  }

  static let modelImportCases: [BadInput] = [
    importModel(["empty": .directory], "@D/empty", ["@D/empty", "not a Core Data model"]),
    importModel(["notes.txt": .text("x")], "@D/nothing", ["@D/nothing", "no such file"]),
    importModel(
      ["m.xcdatamodel": .directory, "m.xcdatamodel/contents": garbage], "@D/m.xcdatamodel",
      ["@D/m.xcdatamodel/contents", "neither an XML model nor a binary property list"]),
    importModel(
      xcdatamodel("<plist><dict/></plist>"), "@D/m.xcdatamodel",
      ["@D/m.xcdatamodel/contents", "expected a Core Data model (<model>), found <plist>"]),
    importModel(
      xcdatamodel("<model><entity name=\"A\">"), "@D/m.xcdatamodel",
      ["@D/m.xcdatamodel/contents", "not well-formed XML at line 1"]),
    importModel(
      xcdatamodel(#"<model><entity name="A"><attribute name="x" attributeType="Integer 128"/></entity></model>"#),
      "@D/m.xcdatamodel", ["@D/m.xcdatamodel/contents", "A.x: unknown attributeType 'Integer 128'"]),
    importModel(
      xcdatamodel(#"<model><entity name="A"><attribute name="x" attributeType="ObjectID"/></entity></model>"#),
      "@D/m.xcdatamodel", ["@D/m.xcdatamodel/contents", "A.x: attribute type 'ObjectID' has no EventGraph type"]),
    importModel(
      xcdatamodel(
        #"<model><entity name="A"><relationship name="b" destinationEntity="A" deletionRule="Explode"/></entity></model>"#
      ),
      "@D/m.xcdatamodel", ["@D/m.xcdatamodel/contents", "A.b: unknown deletionRule 'Explode'"]),
    importModel(
      xcdatamodel(
        #"<model><entity name="A"><attribute name="n" attributeType="Integer 16" defaultValueString="70000"/></entity></model>"#
      ),
      "@D/m.xcdatamodel", ["@D/m.xcdatamodel/contents", "A.n: default '70000' is not a Integer 16 value"]),
    importModel(
      xcdatamodel(#"<model><entity name="A" parentEntity="B"/><entity name="B" parentEntity="A"/></model>"#),
      "@D/m.xcdatamodel", ["@D/m.xcdatamodel/contents", "inheritance forms a cycle"]),
    // Keyed archives: a reference to no object, a plist that contains itself, a cut file.
    importModel(
      ["m.mom": .bytes(TinyPlist.archive(rootClass: "NSManagedObjectModel", rootReference: 9))], "@D/m.mom",
      ["@D/m.mom", "a reference to object 9, which does not exist"]),
    importModel(
      ["m.mom": .bytes(TinyPlist.selfContainingArray)], "@D/m.mom", ["@D/m.mom", "a reference cycle"]),
    importModel(
      ["m.mom": .bytes(TinyPlist.archive(rootClass: "NSWindow", rootReference: 0))], "@D/m.mom",
      ["@D/m.mom", "not an Xcode data model"]),
    importModel(
      ["m.mom": .bytes(Array(TinyPlist.archive(rootClass: "NSManagedObjectModel", rootReference: 0).dropLast(12)))],
      "@D/m.mom", ["@D/m.mom", "binary property list"]),
    bad(2, ["import-model", "@C/SwiftGen/Model.xcdatamodeld"], ["--out"]),
  ]

  static func importStore(
    _ files: [String: FileKind], _ file: String, model: String, _ names: [String], extra: [String] = []
  )
    -> BadInput
  {
    bad(1, ["import-coredata", "@D/new", file, "--model", model] + extra, names, files: files, absent: ["@D/new"])
  }

  static let myMigration = "@C/MyMigration/MyMigration_DataModel.xcdatamodeld"
  static let tavant = "@C/TavantTrade/Model.xcdatamodeld"

  /// An XML store of the seed's shape whose metadata names `entity`, holding `objects`.
  static func xmlStore(entity: String = "AddressBook", _ objects: String) -> FileKind {
    .text(
      #"""
      <?xml version="1.0" standalone="yes"?>
      <database><databaseInfo><version>134481920</version><UUID>846D6024-1C5F-4C80-96AF-FD5C69BED3CA</UUID>
      <metadata><plist version="1.0"><dict><key>NSStoreModelVersionHashes</key><dict><key>\#(entity)</key>
      <data>xsRr3be3AYy1bApVL5v2kob66uXcEyPmAZeax8/Ie2c=</data></dict></dict></plist></metadata></databaseInfo>
      \#(objects)</database>
      """#)
  }

  static let sqliteBytes: [UInt8] = {
    let path = CoreDataCommandTests.fixtures + "/TavantTrade/Model.sqlite"
    return [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
  }()

  static let storeImportCases: [BadInput] = [
    importStore(["x.sqlite": .text("hello")], "@D/x.sqlite", model: tavant, ["@D/x.sqlite", "not a SQLite database"]),
    importStore(
      ["x.sqlite": .bytes(Array(sqliteBytes.prefix(3000)))], "@D/x.sqlite", model: tavant,
      ["@D/x.sqlite", "damaged or truncated"]),
    importStore(
      [:], "@C/TavantTrade/Model.sqlite", model: myMigration,
      ["Model.sqlite", "matches no version", "FeedbackCategory"]),
    importStore([:], "@D/none.sqlite", model: tavant, ["@D/none.sqlite"]),
    importStore(
      [
        "v1": xmlStore(
          entity: "Person",
          #"<object type="ADDRESSBOOK" id="z1"><attribute name="firstname" type="string">a</attribute></object>"#)
      ],
      "@D/v1", model: myMigration, ["@D/v1", "matches no version", "metadata names the entities Person"]),
    importStore(
      ["v1": xmlStore(#"<object type="PERSON" id="z1"></object>"#)], "@D/v1", model: myMigration,
      ["@D/v1", "matches no version", "object type 'PERSON'"]),
    importStore(
      [
        "v1": xmlStore(
          #"<object type="ADDRESSBOOK" id="z7"><attribute name="lastname" type="string">b</attribute></object>"#)
      ],
      "@D/v1", model: myMigration, ["@D/v1", "break model version 1", "object z7", "AddressBook.firstName is required"]),
    importStore(
      [
        "v1": xmlStore(
          #"<object type="ADDRESSBOOK" id="z7"><attribute name="firstname" type="string">a</attribute><attribute name="lastname" type="string">b</attribute><attribute name="age" type="int16">70000</attribute></object>"#
        )
      ],
      "@D/v1", model: myMigration, ["@D/v1", "object z7", "age: '70000' is not a int16"]),
    importStore(["v1": .text("<database><object")], "@D/v1", model: myMigration, ["@D/v1", "not well-formed XML"]),
    importStore(
      [:], "@C/MyMigration/v1_storedata", model: myMigration, ["has no version 3"], extra: ["--version", "3"]),
    importStore([:], "@C/TavantTrade/Model.sqlite", model: "@D/nomodel", ["@D/nomodel", "no such file"]),
    // An existing store of another model is not appended to.
    bad(
      1, ["import-coredata", "@S", "@C/TavantTrade/Model.sqlite", "--model", tavant],
      ["@S", "the store's model is AddressBook v2, not the Model v1"]),
    bad(
      2, ["import-coredata", "@D/new", "@C/TavantTrade/Model.sqlite", "--model", tavant, "--batch", "0"], ["--batch"]),
    bad(2, ["import-coredata", "@D/new", "@C/TavantTrade/Model.sqlite"], ["--model"]),
  ]

  static let mappingImportCases: [BadInput] = [
    bad(
      1, ["import-mapping", "@D/m.xcmappingmodel", "--out", "@D/m.json"], ["xcmapping.xml", "no such file"],
      files: ["m.xcmappingmodel": .directory], absent: ["@D/m.json"]),
    bad(
      1, ["import-mapping", "@D/m.xcmappingmodel", "--out", "@D/m.json"], ["not a mapping model"],
      files: ["m.xcmappingmodel": .directory, "m.xcmappingmodel/xcmapping.xml": .text("<database></database>")],
      absent: ["@D/m.json"]),
    bad(
      1, ["import-mapping", "@D/m.xcmappingmodel", "--out", "@D/m.json", "--model", myMigration],
      ["has no version 'Nope'"],
      files: [
        "m.xcmappingmodel": .directory,
        "m.xcmappingmodel/xcmapping.xml": .text(
          #"<database><object type="XDDEVMAPPINGMODEL" id="z1"><attribute name="sourcemodelpath" type="string">M.xcdatamodeld/Nope.xcdatamodel</attribute><attribute name="destinationmodelpath" type="string">M.xcdatamodeld/M.xcdatamodel</attribute></object></database>"#
        ),
      ], absent: ["@D/m.json"]),
    bad(
      1, ["import-mapping", "@D/m.xcmappingmodel", "--out", "@D/m.json", "--model", myMigration],
      ["entitymappings names z9"],
      files: [
        "m.xcmappingmodel": .directory,
        "m.xcmappingmodel/xcmapping.xml": .text(
          #"<database><object type="XDDEVMAPPINGMODEL" id="z1"><attribute name="sourcemodelpath" type="string">M.xcdatamodeld/MyMigration_DataModel.xcdatamodel</attribute><attribute name="destinationmodelpath" type="string">M.xcdatamodeld/MyMigration_DataModel 2.xcdatamodel</attribute><relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z9"></relationship></object></database>"#
        ),
      ], absent: ["@D/m.json"]),
  ]
}

/// Binary property lists small enough to write by hand: one byte offsets and references.
enum TinyPlist {
  enum Item {
    case string(String), uid(UInt8), array([UInt8]), dictionary([(UInt8, UInt8)])
  }

  static func encode(_ items: [Item], top: UInt8) -> [UInt8] {
    var bytes = Array("bplist00".utf8)
    var offsets: [UInt8] = []
    for item in items {
      offsets.append(UInt8(bytes.count))
      switch item {
      case .string(let s):
        let n = UInt8(s.utf8.count)
        bytes += (n < 15 ? [0x50 | n] : [0x5F, 0x10, n]) + Array(s.utf8)
      case .uid(let u): bytes += [0x80, u]
      case .array(let refs): bytes += [0xA0 | UInt8(refs.count)] + refs
      case .dictionary(let pairs): bytes += [0xD0 | UInt8(pairs.count)] + pairs.map(\.0) + pairs.map(\.1)
      }
    }
    let table = UInt8(bytes.count)
    bytes += offsets
    bytes +=
      [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(items.count)] + [0, 0, 0, 0, 0, 0, 0, top]
      + [0, 0, 0, 0, 0, 0, 0, table]
    return bytes
  }

  /// A keyed archive whose root object is of class `rootClass` and refers (as `NSEntities`)
  /// to object `rootReference` of its `$objects` (0 is `$null`; the table holds 3).
  static func archive(rootClass: String, rootReference: UInt8) -> [UInt8] {
    encode(
      [
        /* 0 */ .dictionary([(1, 2), (3, 4), (5, 6)]),
        /* 1 */ .string("$archiver"), /* 2 */ .string("NSKeyedArchiver"),
        /* 3 */ .string("$top"), /* 4 */ .dictionary([(7, 8)]), /* 5 */ .string("$objects"),
        /* 6 */ .array([9, 10, 11]), /* 7 */ .string("root"), /* 8 */ .uid(1),
        /* 9 */ .string("$null"), /* 10 */ .dictionary([(12, 13), (14, 15)]), /* 11 */ .dictionary([(16, 17)]),
        /* 12 */ .string("$class"), /* 13 */ .uid(2), /* 14 */ .string("NSEntities"), /* 15 */ .uid(rootReference),
        /* 16 */ .string("$classname"), /* 17 */ .string(rootClass),
      ], top: 0)
  }

  /// An array that contains itself.
  static let selfContainingArray = encode([.array([0])], top: 0)
}
