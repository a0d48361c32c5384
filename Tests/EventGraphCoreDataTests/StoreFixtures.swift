import Foundation

@testable import EventGraphCoreData

/// Core Data stores built by the tests, in Core Data's SQLite layout, for a model with
/// inheritance (abstract Item; Book and Magazine, both with a `pages` attribute, so the
/// second is `ZPAGES1`), an ordered to-many with its to-one inverse (Shelf.items ↔
/// Item.shelf, ordered by `Z_FOK_SHELF`) and a many-to-many (Item.tags ↔ Tag.items, the join
/// table `Z_1TAGS`).
enum BuiltStores {
  static let modelXML = #"""
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="Item" representedClassName="Item" isAbstract="YES" syncable="YES">
            <attribute name="added" optional="YES" attributeType="Date"/>
            <attribute name="title" attributeType="String"/>
            <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf"/>
            <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/>
        </entity>
        <entity name="Book" parentEntity="Item" syncable="YES">
            <attribute name="lent" attributeType="Boolean" defaultValueString="NO"/>
            <attribute name="pages" optional="YES" attributeType="Integer 16"/>
        </entity>
        <entity name="Magazine" parentEntity="Item" syncable="YES">
            <attribute name="pages" optional="YES" attributeType="Integer 32"/>
            <attribute name="price" optional="YES" attributeType="Decimal"/>
        </entity>
        <entity name="Shelf" syncable="YES">
            <attribute name="label" attributeType="String"/>
            <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Item" inverseName="shelf" inverseEntity="Item"/>
        </entity>
        <entity name="Tag" syncable="YES">
            <attribute name="name" attributeType="String"/>
            <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/>
        </entity>
    </model>
    """#

  /// The schema, with a column the model does not know (`ZSHELF.ZLEGACY`).
  static let schema = """
    CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
    INSERT INTO Z_PRIMARYKEY VALUES (1, 'Item', 0, 3), (2, 'Book', 1, 0), (3, 'Magazine', 1, 0), (4, 'Shelf', 0, 1),
      (5, 'Tag', 0, 2);
    CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
    CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSHELF INTEGER, Z_FOK_SHELF INTEGER,
      ZADDED TIMESTAMP, ZTITLE VARCHAR, ZLENT INTEGER, ZPAGES INTEGER, ZPAGES1 INTEGER, ZPRICE DECIMAL);
    CREATE TABLE ZSHELF (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR, ZLEGACY VARCHAR);
    CREATE TABLE ZTAG (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR);
    CREATE TABLE Z_1TAGS (Z_1ITEMS INTEGER, Z_5TAGS INTEGER, PRIMARY KEY (Z_1ITEMS, Z_5TAGS));
    """

  /// Three items on one shelf in the order 2, 3, 1 (their `Z_FOK_SHELF`), two tags.
  static let rows = """
    INSERT INTO ZSHELF VALUES (1, 4, 1, 'A-1', 'old column');
    INSERT INTO ZITEM VALUES (1, 2, 1, 1, 3, 0, 'Momotaro', 1, 32, NULL, NULL);
    INSERT INTO ZITEM VALUES (2, 2, 1, 1, 1, 86400.5, 'Kaguya', 0, NULL, NULL, NULL);
    INSERT INTO ZITEM VALUES (3, 3, 1, 1, 2, NULL, 'Oni Monthly', NULL, NULL, 70000, 3.5);
    INSERT INTO ZTAG VALUES (1, 5, 1, 'kids'), (2, 5, 1, 'old');
    INSERT INTO Z_1TAGS VALUES (1, 1), (3, 1), (1, 2);
    """

  /// Writes the model (`DIR/Shelves.xcdatamodel/contents`) and a store (`DIR/Shelves.sqlite`)
  /// with `extra` SQL run after the rows; returns their paths.
  static func make(in dir: String, extra: String = "") throws -> (model: String, store: String) {
    let model = dir + "/Shelves.xcdatamodel"
    try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: true)
    try modelXML.write(toFile: model + "/contents", atomically: true, encoding: .utf8)
    let store = dir + "/Shelves.sqlite"
    let db = try SQLiteDatabase(writing: store)
    try db.execute(schema + rows + extra)
    return (model, store)
  }
}

extension BuiltStores {
  /// The same objects as an XML store, the items listed before their shelf, whose ordered
  /// `items` lists the magazine first; both sides of each link are written, as Core Data does.
  static let xml = #"""
    <?xml version="1.0" standalone="yes"?>
    <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
    <database>
        <databaseInfo><version>134481920</version><UUID>11111111-2222-3333-4444-555555555555</UUID><nextObjectID>106</nextObjectID></databaseInfo>
        <object type="BOOK" id="z102">
            <attribute name="title" type="string">Momotaro</attribute>
            <attribute name="lent" type="bool">1</attribute>
            <attribute name="added" type="date">0.000000</attribute>
            <attribute name="pages" type="int16">32</attribute>
            <relationship name="shelf" type="1/1" destination="SHELF" idrefs="z104"></relationship>
            <relationship name="tags" type="0/0" destination="TAG" idrefs="z105"></relationship>
        </object>
        <object type="MAGAZINE" id="z103">
            <attribute name="title" type="string">Oni Monthly</attribute>
            <attribute name="price" type="decimal">3.5</attribute>
            <relationship name="shelf" type="1/1" destination="SHELF" idrefs="z104"></relationship>
        </object>
        <object type="SHELF" id="z104">
            <attribute name="label" type="string">A-1</attribute>
            <relationship name="items" type="0/0" destination="ITEM" idrefs="z103 z102"></relationship>
        </object>
        <object type="TAG" id="z105">
            <attribute name="name" type="string">kids</attribute>
            <relationship name="items" type="0/0" destination="ITEM" idrefs="z102"></relationship>
        </object>
    </database>
    """#
}
