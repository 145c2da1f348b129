package dev.chaise.server;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class IniConfigTest {
    @Test
    void parsesCouchDbStyleIni() {
        IniConfig c = IniConfig.parse("""
                ; comment
                [chttpd]
                port = 5985 ; trailing comment
                bind_address=127.0.0.1

                [admins]
                admin = secret=with=equals
                [chttpd]
                port = 5986
                """, "test.ini");
        assertEquals("5986", c.get("chttpd", "port").orElseThrow(), "later lines win");
        assertEquals("127.0.0.1", c.get("chttpd", "bind_address", "x"));
        assertEquals("secret=with=equals", c.get("admins", "admin").orElseThrow());
        assertTrue(c.get("couchdb", "max_document_size").isEmpty());
    }

    @Test
    void rejectsLinesOutsideSections() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IniConfig.parse("port = 1\n", "x.ini"));
        assertTrue(e.getMessage().startsWith("x.ini:1:"));
    }

    @Test
    void persistEditsInPlaceKeepingEverythingElse(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path f = dir.resolve("local.ini");
        java.nio.file.Files.writeString(f, """
                ; my settings
                [chttpd]
                port = 5984

                [admins]
                ; the admins
                admin = plain
                other = x
                """);
        IniConfig.persist(f, "admins", "admin", "-pbkdf2:sha256-ab,cd,10");
        IniConfig.persist(f, "admins", "new", "-pbkdf2:sha256-ef,gh,10");
        IniConfig.persist(f, "admins", "other", null);
        IniConfig.persist(f, "cors", "origins", "*");
        assertEquals("""
                ; my settings
                [chttpd]
                port = 5984

                [admins]
                ; the admins
                admin = -pbkdf2:sha256-ab,cd,10
                new = -pbkdf2:sha256-ef,gh,10

                [cors]
                origins = *
                """, java.nio.file.Files.readString(f));
        IniConfig back = IniConfig.load(f);
        assertEquals("-pbkdf2:sha256-ab,cd,10", back.get("admins", "admin").orElseThrow());
        assertTrue(back.get("admins", "other").isEmpty());
    }
}
