-- The demo application's own table: an order is written in the same transaction as its event.
-- The id is chosen by the producer, so that a rolled-back order's id is known to the demo.
CREATE TABLE `orders` (
  `id` BIGINT NOT NULL,
  `customer` VARCHAR(64) NOT NULL,
  `amount` DECIMAL(12, 2) NOT NULL,
  `created` DATETIME(6) NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB;
