package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.http.auth.PasswordHash;
import java.util.HexFormat;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import org.junit.jupiter.api.Test;

class PasswordHashTest {
    @Test
    void createdHashesHaveCouchDbsFormAndVerify() {
        PasswordHash h = PasswordHash.create("secret", "sha256", 1000);
        String s = h.toAdminString();
        assertTrue(s.matches("-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},1000"), s);
        PasswordHash back = PasswordHash.parseAdmin(s).orElseThrow();
        assertEquals(h, back);
        assertTrue(back.matches("secret"));
        assertFalse(back.matches("Secret"));
        assertFalse(back.matches(""));
    }

    @Test
    void derivationAgreesWithTheJdk() throws Exception {
        // The JDK's PBKDF2 over the same UTF-8 password and salt text must give the same key.
        for (String prf : new String[] {"sha", "sha256", "sha512"}) {
            PasswordHash h = PasswordHash.create("pässwörd", prf, 50);
            String jdkAlg = switch (prf) { case "sha" -> "PBKDF2WithHmacSHA1"; case "sha256" -> "PBKDF2WithHmacSHA256"; default -> "PBKDF2WithHmacSHA512"; };
            int bits = switch (prf) { case "sha" -> 160; case "sha256" -> 256; default -> 512; };
            byte[] k = SecretKeyFactory.getInstance(jdkAlg)
                    .generateSecret(new PBEKeySpec("pässwörd".toCharArray(), h.salt().getBytes(java.nio.charset.StandardCharsets.UTF_8), 50, bits)).getEncoded();
            assertEquals(HexFormat.of().formatHex(k), h.derivedKey(), prf);
        }
    }

    @Test
    void rfc6070Vector() {
        // PBKDF2-HMAC-SHA1, P="password", S="salt", c=2, dkLen=20.
        PasswordHash h = new PasswordHash(PasswordHash.Scheme.PBKDF2, "sha", "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957", "salt", 2);
        assertTrue(h.matches("password"));
        assertTrue(PasswordHash.parseAdmin("-pbkdf2-ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957,salt,2").orElseThrow().matches("password"));
    }

    @Test
    void legacyForms() {
        // -hashed-: sha1(password ++ salt) in hex.
        PasswordHash simple = PasswordHash.parseAdmin("-hashed-" + sha1("pwsalty") + ",salty").orElseThrow();
        assertTrue(simple.matches("pw"));
        assertFalse(simple.matches("px"));
    }

    @Test
    void plainTextAndGarbageAreNotHashes() {
        assertFalse(PasswordHash.isHashed("hunter2"));
        assertTrue(PasswordHash.parseAdmin("hunter2").isEmpty());
        assertTrue(PasswordHash.parseAdmin("-pbkdf2-abc").isEmpty());
        assertTrue(PasswordHash.parseAdmin("-pbkdf2:md5-ab,cd,10").isEmpty());
        assertTrue(PasswordHash.parseAdmin("-pbkdf2:sha256-ab,cd,x").isEmpty());
    }

    private static String sha1(String s) {
        try {
            return HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-1").digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
